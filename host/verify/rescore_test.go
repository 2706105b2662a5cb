package verify

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/store/storetest"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/sdk/batchrun"
)

// tweaked is the local scorers with one scorer changed: its first check of
// every result fails, and its results carry the tag "tweaked".
type tweaked struct {
	*local
	id scorer.ID
}

func (t tweaked) Score(ctx context.Context, id scorer.ID, cases []*scorer.Case) []batchrun.Outcome {
	out := t.local.Score(ctx, id, cases)
	if id != t.id {
		return out
	}
	for i := range out {
		if r := out[i].Result; r != nil && len(r.Checks) > 0 {
			r.Checks[0].Passed, r.Checks[0].Score = false, 0
			r.FailureTags = append(r.FailureTags, "tweaked")
		}
	}
	return out
}

// verifiedThenDeleted verifies a copy of candidate-a into st and deletes
// the copy: only the database holds its evidence.
func verifiedThenDeleted(t *testing.T, st *store.Store) (Request, *Report) {
	t.Helper()
	dir := copyRun(t, "../../examples/runs/candidate-a", "candidate-a")
	req := exampleRequest(t, newLocal(), dir)
	req.Engine.Store = st
	req.Engine.Identities = map[scorer.ID]ScorerRef{"task_state": {Version: "1.0.0", SHA256: "19e2aaaa"}}
	rep, err := Run(context.Background(), req)
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	return req, rep
}

func resultsOf(t *testing.T, st *store.Store, runID int64) []TurnResult {
	t.Helper()
	r, err := st.RunByID(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := runResults(context.Background(), st, r)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestRescoreAfterTraceFilesDeleted (issue 17 items 1, 2): the run's trace
// and snapshot files are gone; rescoring from the database with the same
// scorers under another scorer version scores every turn again and gives
// the same scores, and with the same scorer version changes nothing and
// says so.
func TestRescoreAfterTraceFilesDeleted(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, b.DSN(t))
			req, rep := verifiedThenDeleted(t, st)
			from := rep.Candidates[0].RunID

			same, err := Rescore(ctx, RescoreRequest{Engine: req.Engine, Candidate: "candidate-a"})
			if err != nil {
				t.Fatalf("Rescore(same scorers) = %v", err)
			}
			if !same.Unchanged || same.Diff.ToRun != from || len(same.Diff.Turns) != 0 || len(same.Drift) != 0 {
				t.Errorf("Rescore(same scorers) = unchanged %t, to run %d, diff %+v, drift %v; want unchanged run %d",
					same.Unchanged, same.Diff.ToRun, same.Diff.Turns, same.Drift, from)
			}

			eng := req.Engine
			eng.ScorerVersion = "v-rebuilt"
			out := t.TempDir()
			again, err := Rescore(ctx, RescoreRequest{Engine: eng, Candidate: "candidate-a", RunID: from, OutDir: out})
			if err != nil {
				t.Fatalf("Rescore(new scorer version) = %v", err)
			}
			if again.Unchanged || again.Diff.ToRun == from || again.Report.Candidates[0].Reused != 0 {
				t.Errorf("Rescore(new scorer version) = unchanged %t, run %d, reused %d; want every turn scored in a new run",
					again.Unchanged, again.Diff.ToRun, again.Report.Candidates[0].Reused)
			}
			if diff := cmp.Diff(scoresOf(resultsOf(t, st, from)), scoresOf(resultsOf(t, st, again.Diff.ToRun))); diff != "" {
				t.Errorf("scores rescored from evidence (-verified +rescored):\n%s", diff)
			}
			if len(again.Diff.Turns) != 0 || again.Diff.Summary.TurnsChanged != 0 || len(again.NoEvidence) != 0 {
				t.Errorf("diff = %+v, no evidence %v; want nothing changed", again.Diff, again.NoEvidence)
			}
			for _, f := range []string{"results.json", "summary.json", "diff.json"} {
				if _, err := os.Stat(filepath.Join(out, f)); err != nil {
					t.Errorf("--out: %v", err)
				}
			}
		})
	}
}

type turnScores3 struct{ Process, KPI, Turn *float64 }

func scoresOf(rs []TurnResult) map[string]turnScores3 {
	m := map[string]turnScores3{}
	for _, r := range rs {
		m[r.Label] = turnScores3{r.ProcessScore, r.KPIScore, r.TurnScore}
	}
	return m
}

// TestRescoreChangedScorerDiff (issue 17 item 2): rescoring with a
// deliberately changed scorer shows exactly the expected diff, in diff.json
// too.
func TestRescoreChangedScorerDiff(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, b.DSN(t))
			req, rep := verifiedThenDeleted(t, st)
			from := rep.Candidates[0]
			old := byLabel(resultsOf(t, st, from.RunID))["task_create_release_blocker"]

			l := req.Engine.Scorers.(*local)
			eng := req.Engine
			eng.Scorers = tweaked{local: l, id: "task_state"}
			eng.ScorerVersion = "v2"
			eng.Identities = map[scorer.ID]ScorerRef{"task_state": {Version: "1.1.0", SHA256: "7c01bbbb"}}
			out := t.TempDir()
			got, err := Rescore(ctx, RescoreRequest{Engine: eng, Candidate: "candidate-a", OutDir: out})
			if err != nil {
				t.Fatalf("Rescore() = %v", err)
			}
			now := byLabel(resultsOf(t, st, got.Diff.ToRun))["task_create_release_blocker"]
			first := old.Checks[0]
			want := Diff{FromRun: from.RunID, ToRun: got.Diff.ToRun, FromScorerVersion: "v", ToScorerVersion: "v2",
				Turns: []TurnDiff{{Label: "task_create_release_blocker", Old: old.TurnScore, New: now.TurnScore,
					ChangedChecks: []string{first.Source + "/" + first.Name}, TagsGained: minus(now.FailureTags, old.FailureTags)}},
				Summary: DiffSummary{TurnsChanged: 1, GatesChanged: gatesChanged(from.Gates, got.Report.Candidates[0].Gates),
					VerdictFrom: string(from.Verdict.Verdict), VerdictTo: string(got.Report.Candidates[0].Verdict.Verdict)}}
			if diff := cmp.Diff(want, got.Diff); diff != "" {
				t.Errorf("Rescore() diff (-want +got):\n%s", diff)
			}
			if !contains(want.Turns[0].TagsGained, "tweaked") {
				t.Errorf("changed turn: tags gained %v; want tweaked among them", want.Turns[0].TagsGained)
			}
			wantDrift := []Drift{{Unit: "scorer task_state", From: "1.0.0 (sha 19e2…)", To: "1.1.0 (sha 7c01…)"}}
			if diff := cmp.Diff(wantDrift, got.Drift); diff != "" {
				t.Errorf("Rescore() drift (-want +got):\n%s", diff)
			}
			b, err := os.ReadFile(filepath.Join(out, "diff.json"))
			if err != nil {
				t.Fatal(err)
			}
			var onDisk Diff
			if err := json.Unmarshal(b, &onDisk); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got.Diff, onDisk); diff != "" {
				t.Errorf("diff.json (-returned +written):\n%s", diff)
			}
		})
	}
}

// TestRescoreSaysWhatHasNoEvidence (issue 17 items 1, 2): a turn recorded
// before evidence was kept is listed as having none, never guessed; with
// unchanged scorers the run is left as it is.
func TestRescoreSaysWhatHasNoEvidence(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, storetest.SQLite(t))
	req, rep := verifiedThenDeleted(t, st)
	if _, err := st.DB().ExecContext(ctx, `UPDATE company_eval_turns SET trace_sha256 = '' WHERE label = 'validate_delivery_tools'`); err != nil {
		t.Fatal(err)
	}
	var ie *InputError
	if _, err := Rescore(ctx, RescoreRequest{Engine: req.Engine, Candidate: "candidate-a"}); !errors.As(err, &ie) {
		t.Errorf("Rescore(same scorers, a turn without evidence) = %v, want an InputError", err)
	}
	eng := req.Engine
	eng.ScorerVersion = "v3"
	got, err := Rescore(ctx, RescoreRequest{Engine: eng, Candidate: "candidate-a", RunID: rep.Candidates[0].RunID})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"validate_delivery_tools"}, got.NoEvidence); diff != "" {
		t.Errorf("NoEvidence (-want +got):\n%s", diff)
	}
	if got.Report.Candidates[0].Missing != 1 {
		t.Errorf("rescored run missing = %d, want 1 (the turn without evidence)", got.Report.Candidates[0].Missing)
	}
}
