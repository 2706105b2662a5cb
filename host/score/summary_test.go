package score

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// approx compares floats written to 9 decimals with the full-precision
// values Summarize keeps.
var approx = cmpopts.EquateApprox(0, 1e-9)

// noStats leaves out the epoch statistics, which stats_test.go covers.
var noStats = cmpopts.IgnoreFields(Summary{}, "Epochs", "EpochsMin", "MeanScoreCI95", "PassAtK", "PassHatK", "FlakyTasks")

func TestSummarize(t *testing.T) {
	t.Parallel()
	turns := []Turn{
		{Label: "a", Weight: 1.25, SliceTags: []string{"release", "task-write"}, Status: StatusScored, TurnScore: 0.9,
			Finalized: true, LatencyS: f64(40), CostUSD: f64(0.02), ToolCalls: 3},
		{Label: "b", Weight: 1, SliceTags: []string{"memory"}, Status: StatusScored, TurnScore: 0.6,
			Finalized: true, LatencyS: f64(50), CostUSD: f64(0.01), ToolCalls: 2, FailureTags: []string{TagUngroundedAnswer}},
		{Label: "c", Weight: 1, SliceTags: []string{"release"}, Status: StatusUnscored,
			Error: true, LatencyS: f64(90), ToolCalls: 9, FailureTags: []string{TagScorerError, TagFinalizeMissing}},
		{Label: "d", Weight: 1, SliceTags: []string{"release"}, Status: StatusMissing},
	}
	th := Thresholds{MinMeanScore: 0.75, MinFinalizeRate: 1, MaxErrorRate: 0, MaxMeanLatencyS: f64(90)}
	got := Summarize("cand", turns, th)
	want := Summary{
		Candidate:     "cand",
		N:             3,
		MeanScore:     0.766666667, // (1.25·0.9 + 1·0.6) / 2.25; the unscored turn is not averaged in
		FinalizeRate:  0.666666667, // 2/3
		ErrorRate:     0.333333333, // 1/3
		MeanLatencyS:  f64(60),     // (40+50+90)/3
		MeanToolCalls: 4.666666667, // 14/3
		MeanCostUSD:   nil,         // c has no cost
		Unscored:      1,
		Missing:       1,
		Slices: map[string]Slice{
			"release":    {N: 1, MeanScore: 0.9},
			"task-write": {N: 1, MeanScore: 0.9},
			"memory":     {N: 1, MeanScore: 0.6},
		},
		FailureTags: map[string]int{TagUngroundedAnswer: 1, TagScorerError: 1, TagFinalizeMissing: 1},
		Gates: Gates{Failed: []GateFailure{
			{Gate: GateMinFinalizeRate, Value: 0.666666667, Threshold: 1},
			{Gate: GateMaxErrorRate, Value: 0.333333333, Threshold: 0},
			{Gate: GateUnscored, Value: 1, Threshold: 0},
			{Gate: GateMissing, Value: 1, Threshold: 0},
		}},
	}
	if diff := cmp.Diff(want, got, approx, noStats); diff != "" {
		t.Errorf("Summarize mismatch (-want +got):\n%s", diff)
	}
}

func TestSummarizeWeightedSlicesAndCost(t *testing.T) {
	t.Parallel()
	turns := []Turn{
		{SliceTags: []string{"qa", "release"}, Weight: 1.25, Status: StatusScored, TurnScore: 0.8, Finalized: true, CostUSD: f64(0.04), ToolCalls: 2},
		{SliceTags: []string{"qa", "qa"}, Weight: 1, Status: StatusScored, TurnScore: 0.4, Finalized: true, CostUSD: f64(0.02), ToolCalls: 1},
		{SliceTags: []string{"release"}, Weight: 0, Status: StatusScored, TurnScore: 1, Finalized: true, CostUSD: f64(0.03), ToolCalls: 0}, // weight 0 counts as 1
	}
	got := Summarize("c", turns, Thresholds{})
	wantSlices := map[string]Slice{
		"qa":      {N: 2, MeanScore: 0.622222222}, // (1.0 + 0.4) / 2.25; a repeated tag counts once
		"release": {N: 2, MeanScore: 0.888888889}, // (1.0 + 1) / 2.25
	}
	if diff := cmp.Diff(wantSlices, got.Slices, approx); diff != "" {
		t.Errorf("Summarize slices mismatch (-want +got):\n%s", diff)
	}
	if math.Abs(got.MeanScore-2.4/3.25) > 1e-15 || got.MeanScore == round9(got.MeanScore) { // full precision: never rounded // (1.25·0.8 + 0.4 + 1) / 3.25 = 2.4/3.25
		t.Errorf("Summarize mean_score = %v, want 2.4/3.25 = %v at full precision", got.MeanScore, 2.4/3.25)
	}
	if got.MeanCostUSD == nil || math.Abs(*got.MeanCostUSD-0.03) > 1e-12 {
		t.Errorf("Summarize mean_cost_usd = %v, want 0.03", got.MeanCostUSD)
	}
	if got.MeanLatencyS != nil {
		t.Errorf("Summarize mean_latency_s = %v, want nil without latencies", *got.MeanLatencyS)
	}
	if !got.Eligible || !got.Gates.Passed || len(got.Gates.Failed) != 0 {
		t.Errorf("Summarize gates = %+v, eligible %v; want passed with zero thresholds", got.Gates, got.Eligible)
	}
}

func TestSummarizeEmpty(t *testing.T) {
	t.Parallel()
	got := Summarize("none", nil, Thresholds{MinMeanScore: 0.5})
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"candidate":"none","n":0,"mean_score":0,"finalize_rate":0,"error_rate":0,"mean_latency_s":null,"mean_tool_calls":0,` +
		`"mean_cost_usd":null,"unscored":0,"missing":0,"slices":{},"failure_tags":{},"scorer_version":"",` +
		`"gates":{"passed":false,"failed":[{"gate":"min_mean_score","value":0,"threshold":0.5}]},"eligible":false,` +
		`"epochs":0,"epochs_min":0,"mean_score_ci95":null,"pass_at_k":{},"pass_hat_k":{},"flaky_tasks":[]}`
	if string(b) != want {
		t.Errorf("json.Marshal(Summarize(empty)) =\n%s\nwant\n%s", b, want)
	}
}

// TestGates tests each gate at, just inside and just outside its threshold.
func TestGates(t *testing.T) {
	t.Parallel()
	scored := func(score float64, mut func(*Turn)) Turn {
		tr := Turn{Weight: 1, Status: StatusScored, TurnScore: score, Finalized: true}
		if mut != nil {
			mut(&tr)
		}
		return tr
	}
	finalizedOf := func(k, n int) []Turn { // k of n turns finalized
		ts := make([]Turn, n)
		for i := range ts {
			ts[i] = scored(1, func(t *Turn) { t.Finalized = i < k })
		}
		return ts
	}
	erroredOf := func(k, n int) []Turn {
		ts := make([]Turn, n)
		for i := range ts {
			ts[i] = scored(1, func(t *Turn) { t.Error = i < k })
		}
		return ts
	}
	latencies := func(ls ...float64) []Turn {
		ts := make([]Turn, len(ls))
		for i, l := range ls {
			ts[i] = scored(1, func(t *Turn) { t.LatencyS = f64(l) })
		}
		return ts
	}
	costs := func(cs ...*float64) []Turn {
		ts := make([]Turn, len(cs))
		for i, c := range cs {
			ts[i] = scored(1, func(t *Turn) { t.CostUSD = c })
		}
		return ts
	}
	tests := []struct {
		name  string
		turns []Turn
		th    Thresholds
		want  []GateFailure
	}{
		{"mean score at min", []Turn{scored(0.75, nil)}, Thresholds{MinMeanScore: 0.75}, nil},
		{"mean score above min", []Turn{scored(0.751, nil)}, Thresholds{MinMeanScore: 0.75}, nil},
		{"mean score below min", []Turn{scored(0.749, nil)}, Thresholds{MinMeanScore: 0.75},
			[]GateFailure{{GateMinMeanScore, 0.749, 0.75}}},
		{"mean score at min in decimal, not in binary", []Turn{scored(0.1, nil), scored(0.2, nil), scored(0.3, nil)}, Thresholds{MinMeanScore: 0.2}, nil},
		{"finalize rate at min", finalizedOf(3, 4), Thresholds{MinFinalizeRate: 0.75}, nil},
		{"finalize rate above min", finalizedOf(3, 4), Thresholds{MinFinalizeRate: 0.74}, nil},
		{"finalize rate below min", finalizedOf(3, 4), Thresholds{MinFinalizeRate: 0.76},
			[]GateFailure{{GateMinFinalizeRate, 0.75, 0.76}}},
		{"error rate at max", erroredOf(1, 4), Thresholds{MaxErrorRate: 0.25}, nil},
		{"error rate under max", erroredOf(1, 4), Thresholds{MaxErrorRate: 0.26}, nil},
		{"error rate over max", erroredOf(1, 4), Thresholds{MaxErrorRate: 0.24},
			[]GateFailure{{GateMaxErrorRate, 0.25, 0.24}}},
		{"latency at max", latencies(80, 100), Thresholds{MaxMeanLatencyS: f64(90)}, nil},
		{"latency at max in decimal, not in binary", latencies(0.1, 0.2), Thresholds{MaxMeanLatencyS: f64(0.15)}, nil},
		{"latency under max", latencies(80, 99), Thresholds{MaxMeanLatencyS: f64(90)}, nil},
		{"latency over max", latencies(80, 101), Thresholds{MaxMeanLatencyS: f64(90)},
			[]GateFailure{{GateMaxMeanLatencyS, 90.5, 90}}},
		{"latency without a max", latencies(1000), Thresholds{}, nil},
		{"max latency without latencies", []Turn{scored(1, nil)}, Thresholds{MaxMeanLatencyS: f64(1)}, nil},
		{"cost at max", costs(f64(0.04), f64(0.06)), Thresholds{MaxMeanCostUSD: f64(0.05)}, nil},
		{"cost under max", costs(f64(0.04), f64(0.05)), Thresholds{MaxMeanCostUSD: f64(0.05)}, nil},
		{"cost over max", costs(f64(0.04), f64(0.062)), Thresholds{MaxMeanCostUSD: f64(0.05)},
			[]GateFailure{{GateMaxMeanCostUSD, 0.051, 0.05}}},
		{"cost unknown for a turn: no cost gate", costs(f64(1), nil), Thresholds{MaxMeanCostUSD: f64(0.05)}, nil},
		{"safety", []Turn{scored(1, func(t *Turn) { t.FailureTags = []string{TagSafetyGateFailed} }), scored(1, nil)}, Thresholds{},
			[]GateFailure{{GateSafety, 1, 0}}},
		{"safety on an unscored turn", []Turn{scored(1, func(t *Turn) {
			t.Status, t.FailureTags = StatusUnscored, []string{TagSafetyGateFailed, TagScorerError}
		})}, Thresholds{},
			[]GateFailure{{GateSafety, 1, 0}, {GateUnscored, 1, 0}}},
		{"unscored", []Turn{scored(1, nil), scored(0, func(t *Turn) { t.Status = StatusUnscored })}, Thresholds{MinMeanScore: 1},
			[]GateFailure{{GateUnscored, 1, 0}}}, // mean_score stays 1: the unscored turn is not a 0
		{"missing", []Turn{scored(1, nil), {Status: StatusMissing}, {Status: StatusMissing}}, Thresholds{MinFinalizeRate: 1},
			[]GateFailure{{GateMissing, 2, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Summarize("c", tt.turns, tt.th)
			want := tt.want
			if want == nil {
				want = []GateFailure{}
			}
			if diff := cmp.Diff(Gates{Passed: len(want) == 0, Failed: want}, got.Gates, approx); diff != "" {
				t.Errorf("Summarize(%s).Gates mismatch (-want +got):\n%s", tt.name, diff)
			}
			if got.Eligible != (len(want) == 0) {
				t.Errorf("Summarize(%s).Eligible = %v, want %v", tt.name, got.Eligible, len(want) == 0)
			}
		})
	}
}

// TestConsistentNumbersFullPrecision (issue 12 item 10): scores and means are
// kept at full precision, never rounded, so every JSON output carries the
// same rule; only gate comparisons round (to 9 decimals).
func TestConsistentNumbersFullPrecision(t *testing.T) {
	t.Parallel()
	kpi := KPIScore(0.5, 2, []Weighted{{Score: 1, Weight: 1}})
	turn := TurnScore(0.35, 0.65, 1, kpi)
	s := Summarize("c", []Turn{
		{Status: StatusScored, Weight: 1, TurnScore: turn, Finalized: true},
		{Status: StatusScored, Weight: 1, TurnScore: 1, Finalized: true},
		{Status: StatusScored, Weight: 1, TurnScore: 1},
	}, Thresholds{MinFinalizeRate: 0.666666667})
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"kpi_score", kpi, 2.0 / 3},
		{"turn_score", turn, 0.35 + 0.65*kpi},
		{"mean_score", s.MeanScore, (turn + 2) / 3},
		{"finalize_rate", s.FinalizeRate, 2.0 / 3},
	} {
		if c.got != c.want || c.got == round9(c.got) {
			t.Errorf("%s = %v, want %v at full precision", c.name, c.got, c.want)
		}
	}
	if !s.Gates.Passed {
		t.Errorf("finalize_rate 2/3 against 0.666666667: gates %+v, want passed (compared at 9 decimals)", s.Gates)
	}
}

// TestByTaskAllocatesNoTaskObjects: grouping a run's turns by task makes
// no allocation a task beyond its scores (the tasks are one slice, the
// slice tags a map only of the tasks that have any), so a 10,000-task
// summary holds about 3 MB less while its results are held
// (docs/performance.md, "Verifying many small turns"); and the tasks keep
// their first turn's order and their own tags.
func TestByTaskAllocatesNoTaskObjects(t *testing.T) {
	const n = 2000
	turns := make([]Turn, n)
	for i := range turns {
		turns[i] = Turn{Label: fmt.Sprintf("t%05d", n-i), Weight: 1, Status: StatusScored, TurnScore: 0.5}
	}
	turns[7].SliceTags = []string{"b", "a", "b"}
	allocs := testing.AllocsPerRun(5, func() { byTask(turns) })
	if max := float64(n) * 1.05; allocs > max { // one a task: its Scores
		t.Errorf("byTask of %d tasks: %.0f allocations, want at most %.0f", n, allocs, max)
	}
	// 64 bytes a task in the slice, 8 of scores, a map slot: about 130
	// (a task object, a map of tags for every task and the order were
	// about 400).
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	byTask(turns)
	runtime.ReadMemStats(&after)
	if perTask := float64(after.TotalAlloc-before.TotalAlloc) / n; perTask > 200 {
		t.Errorf("byTask of %d tasks: %.0f bytes allocated a task, want at most 200", n, perTask)
	}
	g := byTask(turns)
	if len(g.all) != n || g.all[0].Label != turns[0].Label || g.all[n-1].Label != turns[n-1].Label {
		t.Fatalf("byTask: %d tasks, first %q, last %q; want %d in the turns' order", len(g.all), g.all[0].Label, g.all[n-1].Label, n)
	}
	if diff := cmp.Diff(map[int][]string{7: {"a", "b"}}, g.tags); diff != "" {
		t.Errorf("byTask tags (-want +got):\n%s", diff)
	}
	if te := g.of(7, turns[7]); te.Label != turns[7].Label {
		t.Errorf("of(7) = %q, want %q", te.Label, turns[7].Label)
	}
}
