package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/pkg/companyos"
)

// ProbeRequest re-scores a seeded sample of stored turns Repeat times with
// the installed scorers (docs/evidence.md).
type ProbeRequest struct {
	Engine    Config
	Candidate string // only this candidate's runs; all when empty
	Sample    int    // turns sampled; default 20
	Repeat    int    // times each is scored; default 3
	Seed      int64
	// Skipped, when set, is told of every sampled turn that could not be
	// probed (its task left the pack, its stored evidence does not prepare),
	// so a smaller sample than asked for is never silent.
	Skipped func(ProbeSkip)
}

// ProbeSkip is a sampled turn the probe could not score, and why.
type ProbeSkip struct {
	RunID  int64  `json:"run_id"`
	Label  string `json:"label"`
	Reason string `json:"reason"`
}

// ScorerHealth is one scorer's probe result; verify and summary.json carry
// it as scorer_health.
type ScorerHealth struct {
	ID      string `json:"id"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
	// Status is ok, nondeterministic, changed_without_version_change, or
	// not_probed (no stored turn of this scorer was sampled, or this
	// binary was never probed).
	Status string `json:"status"`
	Reason string `json:"reason"`
	Turns  int    `json:"turns,omitempty"`
}

// probeTurn is a sampled stored turn.
type probeTurn struct {
	run store.RunRow
	row store.TurnRow
}

// Probe re-scores a seeded sample of the pack's stored turns and reports,
// per scorer the pack uses, whether every repeat gave the same result and,
// when the scorer's version is the one that scored the turn, the stored
// result. The results are recorded.
func Probe(ctx context.Context, req ProbeRequest) ([]ScorerHealth, error) {
	cfg := req.Engine
	if cfg.Store == nil || cfg.Pack == nil {
		return nil, errors.New("probe: a pack and a database are required")
	}
	req.Sample, req.Repeat = cmpOr(req.Sample, 20), cmpOr(req.Repeat, 3)
	sample, err := sampleTurns(ctx, cfg.Store, cfg.Pack.SHA256, req)
	if err != nil {
		return nil, err
	}
	e, err := New(cfg)
	if err != nil {
		return nil, err
	}
	turns := make([]store.TurnRow, len(sample))
	for i, s := range sample {
		turns[i] = s.row
	}
	metrics, err := cfg.Store.TurnMetrics(ctx, turns)
	if err != nil {
		return nil, err
	}
	tally := map[string]*probeTally{}
	for _, s := range sample {
		why, err := e.probeTurn(ctx, s, metrics[s.row.MetricsSHA256], req.Repeat, tally)
		if err != nil {
			return nil, err
		}
		if why != "" && req.Skipped != nil {
			req.Skipped(ProbeSkip{RunID: s.run.ID, Label: s.row.Label, Reason: why})
		}
	}
	out := probeHealth(ConfigUnits(cfg).Scorers, tally)
	rows := make([]store.ProbeRow, len(out))
	for i, h := range out {
		rows[i] = store.ProbeRow{ScorerID: h.ID, Version: h.Version, SHA256: h.SHA256, Status: h.Status, Reason: h.Reason,
			Turns: h.Turns, Repeats: req.Repeat, Seed: req.Seed}
	}
	if err := cfg.Store.InsertProbes(ctx, rows); err != nil {
		return nil, err
	}
	return out, nil
}

func cmpOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// sampleTurns draws req.Sample stored turns with evidence, seeded, from the
// latest attempt of every run of the pack.
func sampleTurns(ctx context.Context, st *store.Store, packSHA string, req ProbeRequest) ([]probeTurn, error) {
	runs, err := st.Runs(ctx, packSHA)
	if err != nil {
		return nil, err
	}
	var all []probeTurn
	for _, r := range runs {
		if req.Candidate != "" && r.Candidate != req.Candidate {
			continue
		}
		rows, err := st.TurnsDone(ctx, r.ID, r.Attempt)
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			if row.Status == store.TurnScored && row.TraceSHA256 != "" && row.MetricsSHA256 != "" {
				all = append(all, probeTurn{run: r, row: row})
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].run.ID != all[j].run.ID {
			return all[i].run.ID < all[j].run.ID
		}
		return all[i].row.Label < all[j].row.Label
	})
	rng := rand.New(rand.NewPCG(uint64(req.Seed), 0x70726f6265))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:min(req.Sample, len(all))], nil
}

// probeTally is what the probe saw of one scorer.
type probeTally struct {
	turns         int
	nondet        []string // labels whose repeats differed
	changed       []string // labels that differ from the stored result under the same version
	versionChange int      // turns stored by another version, not compared with the stored result
}

// probeTurn scores one stored turn, whose metrics row is metrics, repeat times and tallies it under its
// task's scorer and upstream scorers. A difference is charged to the
// scorers whose checks differ (a check's source names its scorer), else to
// the task's scorer.
// A turn it cannot score is skipped with the reason returned.
func (e *Engine) probeTurn(ctx context.Context, s probeTurn, metrics []byte, repeat int, tally map[string]*probeTally) (string, error) {
	ts, err := evidenceTurnFrom(s.run, s.row, metrics)
	if err != nil {
		return "", err
	}
	info, ok := e.tasks[ts.Label]
	if !ok {
		return "not a task of this pack any more", nil
	}
	p := e.prepare(ctx, &pass{prior: map[store.TurnKey]store.TurnRow{}}, &ts, &snapshotCache{m: map[string]*companyos.Snapshot{}})
	if p.failed {
		return "its stored evidence could not be prepared: " + p.diags.Errors().Error(), nil
	}
	var stored TurnResult
	if err := json.Unmarshal(s.row.Result, &stored); err != nil {
		return "", fmt.Errorf("probe: reading stored turn %s of run %d: %w", ts.Label, s.run.ID, err)
	}
	task := string(info.task.Scorer)
	ids := append([]string{task}, scorerIDs(e.upstreams[ts.Label])...)
	for _, id := range ids {
		if tally[id] == nil {
			tally[id] = &probeTally{}
		}
		tally[id].turns++
	}
	label := fmt.Sprintf("%s (run %d)", ts.Label, s.run.ID)
	var first TurnResult
	for k := range repeat {
		p.result, p.err, p.ups, p.upErr, p.retried = nil, nil, nil, nil, false
		e.scoreChunk(ctx, []*prepared{p})
		r := e.finish(ctx, s.run.Candidate, p)
		if k == 0 {
			first = r
		} else if blamed := blame(first, r, task); len(blamed) > 0 {
			for _, id := range blamed {
				tally[id].nondet = append(tally[id].nondet, label)
			}
			return "", nil
		}
	}
	for _, id := range blame(stored, first, task) {
		if stored.Scorer.Version != e.cfg.Identities[info.task.Scorer].Version {
			tally[id].versionChange++
		} else {
			tally[id].changed = append(tally[id].changed, label)
		}
	}
	return "", nil
}

// blame names the scorers whose decision about the turn differs between a
// and b: those whose checks differ, else the task's scorer when anything
// else differs; none when a and b agree.
func blame(a, b TurnResult, task string) []string {
	if fingerprint(a) == fingerprint(b) {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, c := range changedChecks(a.Checks, b.Checks) {
		src, _, _ := strings.Cut(c, "/")
		if id, ok := strings.CutPrefix(src, "scorer:"); ok && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		out = []string{task}
	}
	return out
}

func scorerIDs[T ~string](ids []T) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

// fingerprint is what a scorer decides about a turn: status, scores,
// checks and failure tags.
func fingerprint(r TurnResult) string {
	b, _ := json.Marshal(struct {
		Status             string
		Process, KPI, Turn *float64
		Checks             []CheckResult
		Tags               []string
	}{string(r.Status), r.ProcessScore, r.KPIScore, r.TurnScore, r.Checks, r.FailureTags})
	return string(b)
}

// probeHealth is the health of every scorer from what the probe saw.
func probeHealth(scorers []ScorerRef, tally map[string]*probeTally) []ScorerHealth {
	out := make([]ScorerHealth, 0, len(scorers))
	for _, s := range scorers {
		h := ScorerHealth{ID: s.ID, Version: s.Version, SHA256: s.SHA256, Status: store.ProbeOK}
		t := tally[s.ID]
		switch {
		case t == nil:
			h.Status, h.Reason = store.ProbeNotProbed, "no stored turn of this scorer was sampled"
		case len(t.nondet) > 0:
			h.Status = store.ProbeNondeterministic
			h.Reason = fmt.Sprintf("repeats differed on %d of %d turns: %s", len(t.nondet), t.turns, strings.Join(t.nondet, ", "))
		case len(t.changed) > 0:
			h.Status = store.ProbeChangedSameVersion
			h.Reason = fmt.Sprintf("same version %s, different result from the stored one on %d of %d turns: %s",
				s.Version, len(t.changed), t.turns, strings.Join(t.changed, ", "))
		default:
			h.Reason = fmt.Sprintf("%d turns: identical on every repeat", t.turns)
			if n := t.turns - t.versionChange; n > 0 {
				h.Reason += fmt.Sprintf(" and to the stored result on %d", n)
			}
			if t.versionChange > 0 {
				h.Reason += fmt.Sprintf("; %d stored by another version, not compared", t.versionChange)
			}
		}
		if t != nil {
			h.Turns = t.turns
		}
		out = append(out, h)
	}
	return out
}

// scorerHealth is the health of every scorer cfg uses from its latest
// probe: a probe of another binary (sha256) does not count.
func scorerHealth(ctx context.Context, cfg Config) ([]ScorerHealth, error) {
	out := []ScorerHealth{}
	if cfg.Store == nil {
		return out, nil
	}
	probes, err := cfg.Store.LatestProbes(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range ConfigUnits(cfg).Scorers {
		h := ScorerHealth{ID: s.ID, Version: s.Version, SHA256: s.SHA256, Status: store.ProbeNotProbed,
			Reason: "never probed (assay scorers probe)"}
		if pr, ok := probes[s.ID]; ok && pr.SHA256 == s.SHA256 {
			h.Status, h.Turns = pr.Status, pr.Turns
			h.Reason = fmt.Sprintf("probe of %s: %s", pr.CreatedAt.UTC().Format("2006-01-02 15:04"), pr.Reason)
		} else if ok {
			h.Reason = fmt.Sprintf("the last probe (%s) was of another binary (sha %s)", pr.CreatedAt.UTC().Format("2006-01-02 15:04"), shortSHA(pr.SHA256))
		}
		out = append(out, h)
	}
	return out, nil
}

// HealthSuspect is the health of a scorer whose review override rate made
// it suspect (docs/governance.md); it takes the place of the probe's status,
// whose reason is kept.
const HealthSuspect = "suspect"

// Flagged reports whether the probe found the scorer untrustworthy, or
// review made it suspect.
func (h ScorerHealth) Flagged() bool {
	return h.Status == store.ProbeNondeterministic || h.Status == store.ProbeChangedSameVersion || h.Status == HealthSuspect
}
