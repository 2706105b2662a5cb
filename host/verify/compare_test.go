package verify

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/store/storetest"
)

// TestCompareExampleRuns (issue 17 item 3): compare on the example runs,
// by candidate ID and by run ID, checked field by field against what
// verify wrote.
func TestCompareExampleRuns(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, b.DSN(t))
			req := exampleRequest(t, newLocal(), "../../examples/runs/candidate-a", "../../examples/runs/candidate-b")
			req.Engine.Store = st
			rep, err := Run(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			var results []TurnResult
			raw, err := os.ReadFile(filepath.Join(req.OutDir, "results.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &results); err != nil {
				t.Fatal(err)
			}
			turn := map[string]map[string]TurnResult{}
			for _, r := range results {
				if turn[r.Candidate] == nil {
					turn[r.Candidate] = map[string]TurnResult{}
				}
				turn[r.Candidate][r.Label] = r
			}
			ca, cb := rep.Candidates[0], rep.Candidates[1]
			want := &Comparison{Pack: rep.Pack, Drift: []Drift{}, Better: []CompareTask{}, Worse: []CompareTask{},
				A: CompareSide{Ref: "candidate-a", Candidate: "candidate-a", RunID: ca.RunID, ScorerVersion: "v", Summary: ca.Summary, Verdict: string(ca.Verdict.Verdict)},
				B: CompareSide{Ref: strconv.FormatInt(cb.RunID, 10), Candidate: "candidate-b", RunID: cb.RunID, ScorerVersion: "v", Summary: cb.Summary, Verdict: string(cb.Verdict.Verdict)}}
			var labels []string
			for l := range turn["candidate-a"] {
				labels = append(labels, l)
			}
			sort.Strings(labels)
			for _, l := range labels {
				x, y := turn["candidate-a"][l], turn["candidate-b"][l]
				task := CompareTask{Label: l, A: x.TurnScore, B: y.TurnScore, ChangedChecks: changedChecks(x.Checks, y.Checks)}
				if x.TurnScore != nil && y.TurnScore != nil {
					task.Delta = *y.TurnScore - *x.TurnScore
				}
				want.Tasks = append(want.Tasks, task)
				if task.Delta > 0 {
					want.Better = append(want.Better, task)
				} else if task.Delta < 0 {
					want.Worse = append(want.Worse, task)
				}
			}
			sort.SliceStable(want.Better, func(i, j int) bool { return want.Better[i].Delta > want.Better[j].Delta })
			sort.SliceStable(want.Worse, func(i, j int) bool { return want.Worse[i].Delta < want.Worse[j].Delta })
			got, err := Compare(ctx, st, rep.Pack, "candidate-a", strconv.FormatInt(cb.RunID, 10))
			if err != nil {
				t.Fatalf("Compare() = %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Compare() (-want +got):\n%s", diff)
			}
			if len(got.Worse)+len(got.Better) == 0 {
				t.Errorf("Compare() found no task that changed between candidate-a and candidate-b")
			}
			if _, err := Compare(ctx, st, rep.Pack, "candidate-a", "nobody"); err == nil {
				t.Errorf("Compare(unknown) = nil error")
			}
		})
	}
}
