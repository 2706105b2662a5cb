package governance

import (
	"fmt"
	"math/rand/v2"
	"sort"
)

// Sampling strategies of `assay review sample`.
const (
	StrategyStratified = "stratified"
	StrategyFailed     = "failed"
	StrategyRandom     = "random"
)

// Candidate is a stored, scored turn that may be sampled for review.
type Candidate struct {
	TurnID    int64   `json:"turn_id"`
	Candidate string  `json:"candidate"`
	Label     string  `json:"label"`
	Scorer    string  `json:"scorer"`
	TurnScore float64 `json:"turn_score"`
	Passed    bool    `json:"-"`
}

// Sample picks up to n of turns with seed: the same turns, seed and
// strategy give the same sample. stratified takes turns in turn from each
// (scorer, pass/fail) stratum; failed takes only failed turns; random takes
// any. The result is ordered by turn id.
func Sample(turns []Candidate, n int, seed uint64, strategy string) ([]Candidate, error) {
	pool := append([]Candidate(nil), turns...)
	sort.Slice(pool, func(i, j int) bool { return pool[i].TurnID < pool[j].TurnID })
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var picked []Candidate
	switch strategy {
	case StrategyRandom, StrategyFailed:
		if strategy == StrategyFailed {
			pool = failedOnly(pool)
		}
		rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		picked = pool[:min(n, len(pool))]
	case StrategyStratified:
		picked = stratified(pool, n, rng)
	default:
		return nil, fmt.Errorf("sample turns: strategy %q: want stratified, failed or random", strategy)
	}
	sort.Slice(picked, func(i, j int) bool { return picked[i].TurnID < picked[j].TurnID })
	return picked, nil
}

func failedOnly(pool []Candidate) []Candidate {
	var out []Candidate
	for _, c := range pool {
		if !c.Passed {
			out = append(out, c)
		}
	}
	return out
}

// stratified shuffles each (scorer, pass/fail) stratum and takes one turn
// of each in stratum order, round after round, until n are taken.
func stratified(pool []Candidate, n int, rng *rand.Rand) []Candidate {
	strata := map[string][]Candidate{}
	for _, c := range pool {
		key := fmt.Sprintf("%s/%t", c.Scorer, c.Passed)
		strata[key] = append(strata[key], c)
	}
	keys := make([]string, 0, len(strata))
	for k := range strata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := strata[k]
		rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	}
	var out []Candidate
	for round := 0; len(out) < n; round++ {
		took := false
		for _, k := range keys {
			if s := strata[k]; round < len(s) && len(out) < n {
				out = append(out, s[round])
				took = true
			}
		}
		if !took {
			break
		}
	}
	return out
}
