package governance

import (
	"strings"
	"testing"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/verify"
)

func entry(run int64, passed bool, mean float64, scorerSHA string) Entry {
	e := Entry{RunID: run, Attempt: 1, Units: verify.Units{PackSHA256: "p", ScorerVersion: "v",
		Scorers: []verify.ScorerRef{{ID: "process_only", Version: "1.0.0", SHA256: scorerSHA}}}}
	e.Report.Gates.Passed = passed
	e.Report.MeanScore = mean
	if !passed {
		e.Report.Gates.Failed = []score.GateFailure{{Gate: "min_mean_score"}}
	}
	return e
}

func greenInput() PromotionInput {
	return PromotionInput{
		Promotion:       pack.Promotion{RequireNoRegression: true, ShadowRuns: 2},
		History:         []Entry{entry(1, true, 0.9, "a"), entry(1, true, 0.9, "a")},
		Baseline:        "base",
		BaselineHistory: []Entry{entry(2, true, 0.8, "a")},
		Scorers:         map[string]ScorerFlag{},
	}
}

// TestPromotionInterlocks covers item 4: each interlock red in turn, then
// all green.
func TestPromotionInterlocks(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		change func(*PromotionInput)
		red    string
	}{
		"latest run failed a gate": {func(in *PromotionInput) {
			in.History = append(in.History, entry(1, false, 0.9, "a"))
			in.Promotion.ShadowRuns = 0
		}, InterlockLatestGates},
		"too few shadow runs": {func(in *PromotionInput) { in.Promotion.ShadowRuns = 3 }, InterlockShadowRuns},
		"shadow run with other units does not count": {func(in *PromotionInput) {
			in.History[0] = entry(1, true, 0.9, "b")
		}, InterlockShadowRuns},
		"regression against the baseline": {func(in *PromotionInput) {
			in.BaselineHistory = []Entry{entry(2, true, 0.95, "a")}
		}, InterlockNoRegression},
		"no baseline while required": {func(in *PromotionInput) {
			in.Baseline, in.BaselineHistory = "", nil
		}, InterlockNoRegression},
		"kill criterion fired": {func(in *PromotionInput) {
			in.Fired = []Firing{{Name: "score_drop", RunID: 1}}
		}, InterlockKillCriteria},
		"suspect scorer": {func(in *PromotionInput) {
			in.Scorers["process_only"] = ScorerFlag{Suspect: true, Why: "override rate 0.4"}
		}, InterlockScorers},
		"nondeterministic scorer": {func(in *PromotionInput) {
			in.Scorers["process_only"] = ScorerFlag{Nondeterministic: true, Why: "probe"}
		}, InterlockScorers},
		"drift from the baseline": {func(in *PromotionInput) {
			in.BaselineHistory = []Entry{entry(2, true, 0.8, "b")}
		}, InterlockDrift},
		"all green": {func(*PromotionInput) {}, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := greenInput()
			tc.change(&in)
			got := Interlocks(in)
			red := Red(got)
			if tc.red == "" {
				if len(red) != 0 {
					t.Fatalf("Interlocks = red %v, want all green", red)
				}
				return
			}
			if len(red) != 1 || !strings.HasPrefix(red[0], tc.red+":") {
				t.Errorf("Interlocks red = %v, want only %s", red, tc.red)
			}
		})
	}
}

// TestPromotionWithoutRuns: a candidate with no finished run is red on
// every interlock that needs one.
func TestPromotionWithoutRuns(t *testing.T) {
	t.Parallel()
	red := Red(Interlocks(PromotionInput{}))
	if len(red) != 5 {
		t.Errorf("Interlocks without runs: red %v, want 5", red)
	}
}
