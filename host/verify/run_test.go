package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/pkg/diag"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assay-eval/assay/host/kpi"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/verdict"
	"github.com/assay-eval/assay/pkg/scorer"
)

func fp(v float64) *float64 { return &v }

// TestOneVerdictVocabulary (issue 12 item 3): a verified candidate's verdict
// follows its gates and its score is its mean_score.
func TestOneVerdictVocabulary(t *testing.T) {
	t.Parallel()
	scored := func(label string, checkScores ...float64) TurnResult {
		r := TurnResult{Label: label, Status: score.StatusScored, KPIScore: fp(1), TurnScore: fp(1)}
		for _, s := range checkScores {
			r.Checks = append(r.Checks, CheckResult{Name: "c", Score: s, Passed: s >= 1})
		}
		return r
	}
	unscored := TurnResult{Label: "u", Status: score.StatusUnscored, FailureTags: []string{score.TagScorerError}}
	failedGate := score.Gates{Failed: []score.GateFailure{{Gate: score.GateUnscored, Value: 1, Threshold: 0}}}
	tests := []struct {
		name        string
		results     []TurnResult
		sum         score.Summary
		regressions []string
		paired      *score.Paired
		want        verdict.Verdict
		reasons     []string
	}{
		{"gates passed, every check passed", []TurnResult{scored("a", 1, 1)},
			score.Summary{MeanScore: .9, Gates: score.Gates{Passed: true}}, nil, nil, verdict.Pass, []string{}},
		{"gates passed, a check failed (candidate-c)", []TurnResult{scored("a", 1, .6)},
			score.Summary{MeanScore: .867, Gates: score.Gates{Passed: true}}, nil, nil, verdict.PassWithWarnings,
			[]string{"1 of 2 checks failed"}},
		{"gates passed, a paired regression", []TurnResult{scored("a", 1)},
			score.Summary{MeanScore: .8, Gates: score.Gates{Passed: true}}, []string{"a: turn score 0.800, baseline 1.000"},
			&score.Paired{Baseline: "b", Tasks: 1, MeanDelta: -.2, CI95: []float64{-.2, -.2}, Regression: true},
			verdict.PassWithWarnings, []string{"regression against baseline b: mean paired delta -0.200, 95% interval [-0.200, -0.200] over 1 task, " +
				"entirely below 0.000; per-task regression: a: turn score 0.800, baseline 1.000"}},
		{"gates passed, a per-task regression the paired comparison does not confirm", []TurnResult{scored("a", 1)},
			score.Summary{MeanScore: .8, Gates: score.Gates{Passed: true}}, []string{"a: turn score 0.800, baseline 1.000"},
			&score.Paired{Baseline: "b", Tasks: 3, MeanDelta: -.07, CI95: []float64{-.2, 0}},
			verdict.Pass, []string{}},
		{"unscored gate failed with every check passed", []TurnResult{scored("a", 1), unscored},
			score.Summary{MeanScore: 1, Unscored: 1, Gates: failedGate}, nil, nil, verdict.Fail,
			[]string{"gate unscored failed: 1.000 against threshold 0.000", "1 turn unscored"}},
		{"no turn scored", []TurnResult{unscored},
			score.Summary{Unscored: 1, Gates: failedGate}, nil, nil, verdict.Blocked,
			[]string{"gate unscored failed: 1.000 against threshold 0.000", "1 turn unscored"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := runVerdict(&Outcome{Candidate: "c", Results: tt.results, Summary: tt.sum}, tt.regressions, tt.paired)
			if got.Verdict != tt.want || got.Success != tt.want.Success() || got.Score != tt.sum.MeanScore {
				t.Errorf("runVerdict() = %s success %t score %v, want %s and score %v (the mean score)",
					got.Verdict, got.Success, got.Score, tt.want, tt.sum.MeanScore)
			}
			if diff := cmp.Diff(tt.regressions, got.Regressions, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("per-task regressions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.reasons, got.Reasons); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
			if tt.sum.Gates.Passed == (got.Verdict == verdict.Fail || got.Verdict == verdict.Blocked) {
				t.Errorf("verdict %s disagrees with gates passed %t", got.Verdict, tt.sum.Gates.Passed)
			}
			if len(got.Recommendations) != len(got.Reasons) {
				t.Errorf("recommendations %q for reasons %q", got.Recommendations, got.Reasons)
			}
		})
	}
}

// TestScorerCannotRunRule (issue 12 item 5): a scorer that scored none of
// its turns, or failed more than the allowed share, cannot run; a turn whose
// input was unreadable is charged to no scorer.
func TestScorerCannotRunRule(t *testing.T) {
	t.Parallel()
	n := 0
	scorerOf := map[string]string{}
	turn := func(id string, st score.Status, tags ...string) TurnResult {
		n++
		label := fmt.Sprintf("t%d", n)
		scorerOf[label] = id
		return TurnResult{Label: label, Status: st, FailureTags: tags}
	}
	broke := func(id string) TurnResult { return turn(id, score.StatusUnscored, score.TagScorerError) }
	ok := func(id string) TurnResult { return turn(id, score.StatusScored) }
	tests := []struct {
		name  string
		rs    []TurnResult
		share float64
		want  []ScorerFailure
	}{
		{"all fail", []TurnResult{broke("x"), broke("x"), ok("y")}, .5,
			[]ScorerFailure{{Candidate: "c", Scorer: "x", Failed: 2, Turns: 2}}},
		{"half fail: within the default share", []TurnResult{broke("x"), ok("x")}, .5, nil},
		{"two of three fail", []TurnResult{broke("x"), broke("x"), ok("x")}, .5,
			[]ScorerFailure{{Candidate: "c", Scorer: "x", Failed: 2, Turns: 3}}},
		{"share 1: only all", []TurnResult{broke("x"), broke("x"), ok("x")}, 1, nil},
		{"unreadable input is no scorer's", []TurnResult{turn("x", score.StatusUnscored), ok("x")}, .1, nil},
		{"missing is no scorer's", []TurnResult{turn("x", score.StatusMissing)}, .5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, scorerFailures("c", tt.rs, func(l string) string { return scorerOf[l] }, tt.share)); diff != "" {
				t.Errorf("scorerFailures() (-want +got):\n%s", diff)
			}
		})
	}
}

// exampleRequest verifies run directories of the example pack in-process.
func exampleRequest(t *testing.T, l *local, runs ...string) Request {
	t.Helper()
	ch := kpi.NewChecker()
	p, diags := pack.Load("../../packs/example.yaml", pack.Options{Scorers: l.descriptions(), Checks: []pack.Check{ch}})
	if diags.HasErrors() {
		t.Fatalf("loading the example pack: %v", diags)
	}
	return Request{Engine: Config{Pack: p, Scorers: l, Descriptions: l.descriptions(), CEL: ch.Set(), ScorerVersion: "v"},
		Runs: runs, OutDir: t.TempDir()}
}

// copyRun copies a run directory into a temporary directory named name.
func copyRun(t *testing.T, src, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestBrokenCandidateDoesNotAbortOthers (issue 12 item 8): a candidate whose
// results.json is broken is listed with its error; the others are verified
// and summary.json is written.
func TestBrokenCandidateDoesNotAbortOthers(t *testing.T) {
	broken := copyRun(t, "../../examples/runs/candidate-a", "candidate-x")
	if err := os.WriteFile(filepath.Join(broken, "results.json"), []byte("[{\"label\": oops}]"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "candidate-gone")
	req := exampleRequest(t, newLocal(), broken, "../../examples/runs/candidate-a", missing)
	rep, err := Run(context.Background(), req)
	if err != nil {
		t.Fatalf("Run() = %v, want a report", err)
	}
	if len(rep.Candidates) != 1 || rep.Candidates[0].Candidate != "candidate-a" {
		t.Fatalf("verified %+v, want candidate-a only", rep.Candidates)
	}
	var got []string
	for _, e := range rep.Errors {
		got = append(got, e.Candidate)
		if e.Error == "" || e.Input == "" {
			t.Errorf("error entry %+v lacks its input or error", e)
		}
	}
	if diff := cmp.Diff([]string{"candidate-x", "candidate-gone"}, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if !strings.Contains(rep.Errors[0].Error, "results.json") {
		t.Errorf("candidate-x error %q does not name results.json", rep.Errors[0].Error)
	}
	if st, _ := rep.Status(); st != StatusInvalidInput {
		t.Errorf("Status() = %v, want StatusInvalidInput", st)
	}
	var sum struct {
		Candidates []struct{ Candidate string } `json:"candidates"`
		Errors     []CandidateError             `json:"errors"`
		Frontier   []string                     `json:"frontier"`
	}
	b, err := os.ReadFile(filepath.Join(req.OutDir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Candidates) != 1 || len(sum.Errors) != 2 || len(sum.Frontier) != 1 {
		t.Errorf("summary.json = %s", b)
	}
}

// TestRunScorerCannotRun (issue 12 item 5): a scorer that fails on every
// case makes the run a host failure naming the scorer.
func TestRunScorerCannotRun(t *testing.T) {
	l := newLocal()
	l.fail[scorer.ID("task_state")] = true
	rep, err := Run(context.Background(), exampleRequest(t, l, "../../examples/runs/candidate-a"))
	if err != nil {
		t.Fatal(err)
	}
	want := []ScorerFailure{{Candidate: "candidate-a", Scorer: "task_state", Failed: 1, Turns: 1}}
	if diff := cmp.Diff(want, rep.ScorerFailures); diff != "" {
		t.Errorf("scorer failures (-want +got):\n%s", diff)
	}
	if st, msg := rep.Status(); st != StatusHostFailed || !strings.Contains(msg, "task_state") {
		t.Errorf("Status() = %v %q, want StatusHostFailed naming task_state", st, msg)
	}
}

// TestEmptyTurnsFileIsInvalid: a turns file with no turn is invalid input,
// never a run that passes with no candidate.
func TestEmptyTurnsFileIsInvalid(t *testing.T) {
	req := exampleRequest(t, newLocal())
	req.TurnsFile = filepath.Join(t.TempDir(), "turns.jsonl")
	if err := os.WriteFile(req.TurnsFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), req)
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "no turns") {
		t.Errorf("Run(empty turns file) = %v, want an *InputError saying it holds no turns", err)
	}
}

// TestIgnoredTurnsWarn: a turn of the input whose label is not a task of the
// pack is never silently dropped: the verdict says how many and which.
func TestIgnoredTurnsWarn(t *testing.T) {
	t.Parallel()
	sum := score.Summary{MeanScore: 1, Gates: score.Gates{Passed: true}}
	ok := TurnResult{Label: "a", Status: score.StatusScored, KPIScore: fp(1), TurnScore: fp(1)}
	for _, tt := range []struct {
		ignored []string
		want    verdict.Verdict
		reasons []string
	}{
		{nil, verdict.Pass, []string{}},
		{[]string{"b"}, verdict.PassWithWarnings, []string{"1 turn ignored: not a task of the pack (b)"}},
		{[]string{"b", "c", "d", "e", "f", "g.2", "h"}, verdict.PassWithWarnings,
			[]string{"7 turns ignored: not a task of the pack (b, c, d, e, f and 2 more)"}},
	} {
		got := runVerdict(&Outcome{Candidate: "c", Results: []TurnResult{ok}, Summary: sum, Ignored: tt.ignored}, nil, nil)
		if got.Verdict != tt.want || !cmp.Equal(got.Reasons, tt.reasons) {
			t.Errorf("runVerdict(ignored %q) = %s %q, want %s %q", tt.ignored, got.Verdict, got.Reasons, tt.want, tt.reasons)
		}
	}
}

// TestInputWarningsCapped: the report keeps the first MaxInputWarnings
// input warnings with their positions and counts the rest, so a warning on
// every turn of a large run neither grows the report nor goes unsaid;
// errors are not input warnings (they are unreadable turns).
func TestInputWarningsCapped(t *testing.T) {
	t.Parallel()
	r := &runner{rep: &Report{}}
	var ds diag.List
	for i := range MaxInputWarnings + 50 {
		ds = append(ds, diag.Warnf(diag.Pos{File: "turns.ndjson", Line: i + 1}, "run.unknown_label", "turn %d", i))
	}
	r.diagnose(ds[:10])
	r.diagnose(diag.List{diag.Errorf(diag.Pos{File: "x"}, "run.read", "unreadable")})
	r.diagnose(ds[10:])
	if got := len(r.rep.InputWarnings); got != MaxInputWarnings {
		t.Errorf("len(InputWarnings) = %d, want %d", got, MaxInputWarnings)
	}
	if r.rep.InputWarningsOmitted != 50 {
		t.Errorf("InputWarningsOmitted = %d, want 50", r.rep.InputWarningsOmitted)
	}
	if first, last := r.rep.InputWarnings[0], r.rep.InputWarnings[MaxInputWarnings-1]; first.Pos.Line != 1 || last.Pos.Line != MaxInputWarnings {
		t.Errorf("InputWarnings run from line %d to %d, want 1 to %d (the first ones, in order)", first.Pos.Line, last.Pos.Line, MaxInputWarnings)
	}
}
