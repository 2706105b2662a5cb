package governance

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func sampleTurns() []Candidate {
	var out []Candidate
	for i := int64(1); i <= 40; i++ {
		scorer := "process_only"
		if i%4 == 0 {
			scorer = "kpi"
		}
		out = append(out, Candidate{TurnID: i, Scorer: scorer, Passed: i%5 != 0})
	}
	return out
}

// TestReviewSampleSeeded covers item 1: the same seed gives the same sample,
// stratified covers every stratum, failed takes only failed turns.
func TestReviewSampleSeeded(t *testing.T) {
	t.Parallel()
	turns := sampleTurns()
	for _, strategy := range []string{StrategyStratified, StrategyFailed, StrategyRandom} {
		a, err := Sample(turns, 8, 7, strategy)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Sample(turns, 8, 7, strategy)
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("Sample(%s) twice with seed 7 differs (-first +second):\n%s", strategy, diff)
		}
	}
	st, _ := Sample(turns, 4, 1, StrategyStratified)
	strata := map[string]bool{}
	for _, c := range st {
		strata[c.Scorer+map[bool]string{true: "/pass", false: "/fail"}[c.Passed]] = true
	}
	if len(strata) != 4 {
		t.Errorf("stratified sample of 4 covers strata %v, want all 4", strata)
	}
	failed, _ := Sample(turns, 100, 1, StrategyFailed)
	if len(failed) != 8 {
		t.Errorf("failed sample has %d turns, want the 8 failed", len(failed))
	}
	for _, c := range failed {
		if c.Passed {
			t.Errorf("failed sample holds passed turn %d", c.TurnID)
		}
	}
	if _, err := Sample(turns, 1, 1, "best"); err == nil {
		t.Error("Sample with strategy best: no error")
	}
}
