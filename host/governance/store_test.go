package governance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/store/storetest"
	"github.com/assay-eval/assay/host/verify"
)

const testPack = `company: {id: acme}
personas: [ops]
tasks:
  - {label: t1, persona: ops, prompt: a, scorer: answer_keywords}
  - {label: t2, persona: ops, prompt: b, scorer: answer_keywords}
scoring:
  process_weight: 0.5
  kpi_weight: 0.5
  promotion: {shadow_runs: 2, require_no_regression: false, rollback_on: [quality_drop]}
governance: {suspect_rate: 0.2, min_reviews: 5}
kill_criteria:
  - name: score_drop
    expr: history.size() >= 2 && history[history.size()-1].mean_score < history[0].mean_score - 0.1
    message: the mean score dropped by more than 0.1
`

func loadTestPack(t *testing.T) *pack.Pack {
	t.Helper()
	p, ds := pack.Parse("p.yaml", []byte(testPack), pack.Options{})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	return p
}

var testUnits = verify.Units{ScorerVersion: "sv1", Scorers: []verify.ScorerRef{{ID: "answer_keywords", Version: "1.0.0", SHA256: "abc"}}}

// verifyOnce stores one fresh attempt of candidate with the given mean
// score and gate result, and records it in the run history, as a verify
// does. It returns the run's turn ids.
func verifyOnce(t *testing.T, st *store.Store, p *pack.Pack, candidate string, mean float64, passed bool) []int64 {
	t.Helper()
	ctx := context.Background()
	u := testUnits
	u.PackSHA256 = p.SHA256
	units, _ := json.Marshal(u)
	run, err := st.BeginRun(ctx, store.RunKey{Candidate: candidate, PackSHA256: p.SHA256, ScorerVersion: "sv1", Units: units}, true)
	if err != nil {
		t.Fatal(err)
	}
	var rows []store.TurnRow
	for i, label := range []string{"t1", "t2"} {
		s := mean - 0.1 + 0.2*float64(i)
		res, _ := json.Marshal(verify.TurnResult{Candidate: candidate, Label: label, Scorer: u.Scorers[0]})
		rows = append(rows, store.TurnRow{RunID: run.ID, Label: label, Attempt: run.Attempt, Status: store.TurnScored,
			TurnScore: &s, ScorerID: "answer_keywords", ScorerSHA256: "abc", Result: res})
	}
	if err := st.InsertTurns(ctx, rows); err != nil {
		t.Fatal(err)
	}
	c := verify.CandidateReport{Summary: score.Summary{Candidate: candidate, N: 2, MeanScore: mean, ScorerVersion: "sv1",
		Gates: score.Gates{Passed: passed, Failed: []score.GateFailure{}}}, RunID: run.ID}
	if !passed {
		c.Gates.Failed = []score.GateFailure{{Gate: "min_mean_score", Value: mean, Threshold: 0.75}}
	}
	if err := st.FinishRun(ctx, run.ID, store.RunCompleted, []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := RecordHistory(ctx, st, &verify.Report{Candidates: []verify.CandidateReport{c}}); err != nil {
		t.Fatal(err)
	}
	done, err := st.TurnsDone(ctx, run.ID, run.Attempt)
	if err != nil {
		t.Fatal(err)
	}
	return []int64{done[store.TurnKey{Label: "t1", Epoch: 1}].ID, done[store.TurnKey{Label: "t2", Epoch: 1}].ID}
}

func eachBackend(t *testing.T, f func(t *testing.T, st *store.Store)) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			st, err := store.Open(context.Background(), b.DSN(t))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			f(t, st)
		})
	}
}

// TestReviewRecordRefusals covers item 1: every refusal of review record.
func TestReviewRecordRefusals(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		p := loadTestPack(t)
		ids := verifyOnce(t, st, p, "cand", 0.9, true)
		ok := Review{TurnID: ids[0], Reviewer: "ana", Verdict: VerdictAgree, Reason: "right"}
		tests := map[string]struct {
			change func(*Review)
			want   error
		}{
			"override without correct": {func(r *Review) { r.Verdict = VerdictOverride }, ErrMissingCorrect},
			"blank reason":             {func(r *Review) { r.Reason = "  " }, ErrBlankReason},
			"blank reviewer":           {func(r *Review) { r.Reviewer = "" }, ErrBlankReviewer},
			"unknown turn":             {func(r *Review) { r.TurnID = 99999 }, ErrUnknownTurn},
			"no verdict":               {func(r *Review) { r.Verdict = "" }, ErrBadVerdict},
			"bad correct":              {func(r *Review) { r.Verdict, r.Correct = VerdictOverride, "maybe" }, ErrBadCorrect},
			"agree with correct":       {func(r *Review) { r.Correct = "pass" }, ErrAgreeCorrect},
		}
		for name, tc := range tests {
			r := ok
			tc.change(&r)
			if _, err := RecordReview(context.Background(), st, r); !errors.Is(err, tc.want) {
				t.Errorf("%s: RecordReview = %v, want %v", name, err, tc.want)
			}
		}
		stats, err := Stats(context.Background(), st, p.SHA256, PackThresholds(p))
		if err != nil || len(stats) != 0 {
			t.Errorf("after refusals Stats = %v, %v; want none recorded", stats, err)
		}
		got, err := RecordReview(context.Background(), st, ok)
		if err != nil {
			t.Fatal(err)
		}
		if want := testUnits.Scorers[0]; got.Scorer != want {
			t.Errorf("review attributed to %+v, want %+v", got.Scorer, want)
		}
	})
}

// TestReviewStatsAndQueue covers items 1 and 2 end to end: a seeded sample
// is queued, reviews close it, and stats count overrides per scorer version.
func TestReviewStatsAndQueue(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p := loadTestPack(t)
		var ids []int64
		for range 3 {
			ids = append(ids, verifyOnce(t, st, p, "cand", 0.9, true)...)
		}
		picked, err := SampleQueue(ctx, st, SampleRequest{Pack: p, Candidate: "cand", N: 5, Seed: 3, Strategy: StrategyStratified})
		if err != nil || len(picked) != 2 {
			t.Fatalf("SampleQueue = %v, %v; want the latest run's 2 turns", picked, err)
		}
		open, err := OpenQueue(ctx, st, p.SHA256)
		if err != nil || len(open) != 2 {
			t.Fatalf("OpenQueue = %d, %v; want 2", len(open), err)
		}
		if open[0].AnswerNote == "" {
			t.Errorf("OpenQueue turn without a stored trace has no answer note")
		}
		one := 1.0
		for i, id := range ids {
			r := Review{TurnID: id, Reviewer: "ana", Verdict: VerdictAgree, Reason: "ok"}
			if i == 0 {
				r.Verdict, r.Correct, r.CorrectScore, r.Reason = VerdictOverride, "pass", &one, "it did the task"
			}
			if _, err := RecordReview(ctx, st, r); err != nil {
				t.Fatal(err)
			}
		}
		if open, _ := OpenQueue(ctx, st, p.SHA256); len(open) != 0 {
			t.Errorf("OpenQueue after review = %d turns, want 0", len(open))
		}
		stats, err := Stats(ctx, st, p.SHA256, PackThresholds(p))
		if err != nil {
			t.Fatal(err)
		}
		want := []ScorerStat{{Scorer: "answer_keywords", Version: "1.0.0", SHA256: "abc", Reviews: 6, Overrides: 1,
			OverrideRate: 1.0 / 6, CI95: Wilson(1, 6), Status: StatusOK}}
		if diff := cmp.Diff(want, stats, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Reason" }, cmp.Ignore())); diff != "" {
			t.Errorf("Stats (-want +got):\n%s", diff)
		}
	})
}

// snapshot is everything a kill criterion must never change.
func snapshot(t *testing.T, st *store.Store, p *pack.Pack) string {
	t.Helper()
	ctx := context.Background()
	runs, err := st.Runs(ctx, p.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := History(ctx, st, p.SHA256, "")
	pr, _ := Promotions(ctx, st, "")
	var turns []store.TurnRow
	for _, r := range runs {
		done, _ := st.TurnsDone(ctx, r.ID, r.Attempt)
		for _, d := range done {
			turns = append(turns, d)
		}
	}
	b, _ := json.Marshal([]any{runs, h, pr, len(turns)})
	return string(b)
}

// TestKillCriteriaFireStayClear covers item 3: a criterion fires, is
// recorded once with its run, stays fired, is cleared by a person, and
// never changes anything else.
func TestKillCriteriaFireStayClear(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p := loadTestPack(t)
		verifyOnce(t, st, p, "cand", 0.9, true)
		states, err := CheckKill(ctx, st, p, nil)
		if err != nil || len(states) != 1 || states[0].Fired {
			t.Fatalf("CheckKill with one run = %+v, %v; want not fired", states, err)
		}
		verifyOnce(t, st, p, "cand", 0.7, true)
		before := snapshot(t, st, p)
		states, err = CheckKill(ctx, st, p, nil)
		if err != nil || !states[0].Fired || !states[0].New || states[0].RunID == 0 {
			t.Fatalf("CheckKill after the drop = %+v, %v; want newly fired with its run", states, err)
		}
		if after := snapshot(t, st, p); after != before {
			t.Errorf("firing changed runs, history or promotions:\nbefore %s\nafter  %s", before, after)
		}
		verifyOnce(t, st, p, "cand", 0.95, true) // the history no longer fires it; it stays fired
		states, _ = CheckKill(ctx, st, p, nil)
		if !states[0].Fired || states[0].New {
			t.Errorf("CheckKill later = %+v, want still fired, not fired again", states[0])
		}
		if f, _ := Fired(ctx, st, p.SHA256); len(f) != 1 {
			t.Errorf("Fired = %d firings, want 1 (recorded once)", len(f))
		}
		if err := Clear(ctx, st, p.SHA256, "score_drop", "", "x"); err == nil {
			t.Error("Clear without --by: no error")
		}
		if err := Clear(ctx, st, p.SHA256, "score_drop", "ana", "fixed the scorer"); err != nil {
			t.Fatal(err)
		}
		if err := Clear(ctx, st, p.SHA256, "score_drop", "ana", "again"); !errors.Is(err, ErrNotFired) {
			t.Errorf("Clear twice = %v, want ErrNotFired", err)
		}
		states, _ = CheckKill(ctx, st, p, nil)
		if states[0].Fired {
			t.Errorf("CheckKill after clear (history [0.9 0.7 0.95]) = %+v; want not fired", states[0])
		}
	})
}

// TestPromoteRefusedThenRecorded covers item 4 against the database: red
// interlocks refuse and record nothing; once green, the record holds what
// item 5 lists.
func TestPromoteRefusedThenRecorded(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p := loadTestPack(t)
		req := PromoteRequest{Pack: p, Candidate: "cand", ApprovedBy: "ana", Reason: "ready"}
		if _, err := Promote(ctx, st, PromoteRequest{Pack: p, Candidate: "cand"}); !errors.Is(err, ErrNoApprover) {
			t.Errorf("Promote without approver = %v, want ErrNoApprover", err)
		}
		verifyOnce(t, st, p, "cand", 0.9, false)
		var refused *RefusedError
		if _, err := Promote(ctx, st, req); !errors.As(err, &refused) || len(refused.Red) != 2 {
			t.Fatalf("Promote after a failed run = %v, want refused on latest_run_gates and shadow_runs", err)
		}
		verifyOnce(t, st, p, "cand", 0.9, true)
		verifyOnce(t, st, p, "cand", 0.9, true)
		pr, err := Promote(ctx, st, req)
		if err != nil {
			t.Fatal(err)
		}
		list, err := Promotions(ctx, st, p.SHA256)
		if err != nil || len(list) != 1 {
			t.Fatalf("Promotions = %v, %v", list, err)
		}
		got := list[0]
		if got.ApprovedBy != "ana" || len(got.Runs) != 1 || got.ScorerVersion != "sv1" || len(got.Interlocks) != 6 ||
			fmt.Sprint(got.RollbackOn) != "[quality_drop]" || got.ID != pr.ID {
			t.Errorf("promotion record = %+v", got)
		}
	})
}

// TestKillCriterionRuntimeError: a criterion that fails at run time is not
// fired, says why, and records nothing.
func TestKillCriterionRuntimeError(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		src := strings.Replace(testPack, "history.size() >= 2 && history[history.size()-1].mean_score < history[0].mean_score - 0.1", "history[1].mean_score > 0", 1)
		p, ds := pack.Parse("p.yaml", []byte(src), pack.Options{})
		if ds.HasErrors() {
			t.Fatal(ds)
		}
		verifyOnce(t, st, p, "cand", 0.9, true)
		states, err := CheckKill(ctx, st, p, nil)
		if err != nil || len(states) != 1 || states[0].Fired || !strings.Contains(states[0].Error, "candidate cand") {
			t.Fatalf("CheckKill with history[1] of one run = %+v, %v; want not fired, with an error", states, err)
		}
		if f, _ := Fired(ctx, st, p.SHA256); len(f) != 0 {
			t.Errorf("Fired = %v, want none recorded", f)
		}
	})
}

// TestCheckKillWithoutCriteriaReadsNoHistory: a pack without kill criteria
// has nothing to evaluate, so CheckKill (run at the end of every verify)
// does not read the run history, which grows with every run recorded
// against the pack (docs/performance.md, "Flat memory"). A history row that
// does not decode shows it: with a criterion it is an error, without none
// is read.
func TestCheckKillWithoutCriteriaReadsNoHistory(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		with := loadTestPack(t)
		src := testPack[:strings.Index(testPack, "kill_criteria:")]
		without, ds := pack.Parse("p.yaml", []byte(src), pack.Options{})
		if ds.HasErrors() {
			t.Fatal(ds)
		}
		without.SHA256 = with.SHA256 // the same history
		verifyOnce(t, st, with, "cand", 0.9, true)
		if _, err := st.DB().ExecContext(ctx, `UPDATE company_eval_run_history SET report = 'not json'`); err != nil {
			t.Fatal(err)
		}
		if _, err := CheckKill(ctx, st, with, nil); err == nil {
			t.Fatal("CheckKill with a kill criterion over an unreadable history: no error, want one (the history is read)")
		}
		states, err := CheckKill(ctx, st, without, []string{"cand"})
		if err != nil || states == nil || len(states) != 0 {
			t.Errorf("CheckKill without kill criteria = %#v, %v; want no states and no error (no history read)", states, err)
		}
	})
}
