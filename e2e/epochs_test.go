package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// epochRun writes a run directory whose task epochs are the example
// candidates' turns: epoch i of every task is from[i-1]'s turn, with its
// results.json row; the before snapshot is shared, the after snapshots are
// per epoch (docs/run-input.md).
func epochRun(t *testing.T, dir string, from ...string) string {
	t.Helper()
	run := filepath.Join(dir, "flip")
	for _, d := range []string{"results", "state"} {
		if err := os.MkdirAll(filepath.Join(run, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var rows []map[string]any
	for i, cand := range from {
		src := filepath.Join(root, "examples", "runs", cand)
		b, err := os.ReadFile(filepath.Join(src, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rs []map[string]any
		if err := json.Unmarshal(b, &rs); err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			label := r["label"].(string)
			r["epoch"] = i + 1
			delete(r, "trace")
			rows = append(rows, r)
			copyFile(t, filepath.Join(src, "results", label+".ndjson"), filepath.Join(run, "results", fmt.Sprintf("%s.%d.ndjson", label, i+1)))
			copyFile(t, filepath.Join(src, "state", label+".after.json"), filepath.Join(run, "state", fmt.Sprintf("%s.%d.after.json", label, i+1)))
			copyFile(t, filepath.Join(src, "state", label+".before.json"), filepath.Join(run, "state", label+".before.json"))
		}
	}
	b, _ := json.Marshal(rows)
	if err := os.WriteFile(filepath.Join(run, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return run
}

type epochSummary struct {
	Candidates []struct {
		Candidate  string             `json:"candidate"`
		MeanScore  float64            `json:"mean_score"`
		Epochs     int                `json:"epochs"`
		CI         []float64          `json:"mean_score_ci95"`
		PassAtK    map[string]float64 `json:"pass_at_k"`
		PassHatK   map[string]float64 `json:"pass_hat_k"`
		FlakyTasks []string           `json:"flaky_tasks"`
		Paired     *struct {
			Tasks      int       `json:"tasks"`
			MeanDelta  float64   `json:"mean_delta"`
			CI         []float64 `json:"ci95"`
			Regression bool      `json:"regression"`
		} `json:"paired"`
		Verdict struct {
			Regressions []string `json:"regressions"`
		} `json:"verdict"`
	} `json:"candidates"`
	Frontier           []string    `json:"frontier"`
	NotDistinguishable [][2]string `json:"frontier_not_distinguishable"`
}

// TestVerifyEpochs (issue 19): a run directory with four epochs per task
// (two of candidate-a's turns, two of candidate-c's): task means, pass@k
// and pass^k by hand, flaky tasks, a reproducible interval under --seed,
// the paired comparison with a baseline, and the frontier pair that the
// data cannot tell apart.
func TestVerifyEpochs(t *testing.T) {
	dir := t.TempDir()
	run := epochRun(t, dir, "candidate-a", "candidate-a", "candidate-c", "candidate-c")
	db := filepath.Join(dir, "assay.db")
	args := []string{"verify", "--pack", "packs/example.yaml", "--run", run, "--run", "examples/runs/candidate-a",
		"--run", "examples/runs/candidate-c", "--baseline", "candidate-a", "--format", "json"}
	r := run2(t, db, args...)
	var sum epochSummary
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatalf("verify: exit %d: %v\n%s", r.code, err, r.stderr)
	}
	var flip = sum.Candidates[len(sum.Candidates)-1]
	for _, c := range sum.Candidates {
		if c.Candidate == "flip" {
			flip = c
		}
	}
	// a's turns all score 1 (they pass); c's score .74, .8917 and 1: the
	// task and memory tasks pass 2 of 4 epochs, validate 4 of 4.
	approx := cmpopts.EquateApprox(0, 1e-9)
	wantAt := map[string]float64{"1": (0.5 + 0.5 + 1) / 3, "2": (5.0/6 + 5.0/6 + 1) / 3, "3": 1, "4": 1}
	wantHat := map[string]float64{"1": (0.5 + 0.5 + 1) / 3, "2": (1.0/6 + 1.0/6 + 1) / 3, "3": 1.0 / 3, "4": 1.0 / 3}
	if diff := cmp.Diff(wantAt, flip.PassAtK, approx); diff != "" {
		t.Errorf("pass_at_k (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantHat, flip.PassHatK, approx); diff != "" {
		t.Errorf("pass_hat_k (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"memory_grounded_recent_work", "task_create_release_blocker"}, flip.FlakyTasks); diff != "" {
		t.Errorf("flaky_tasks (-want +got):\n%s", diff)
	}
	if flip.Epochs != 4 || len(flip.CI) != 2 || flip.CI[0] > flip.MeanScore || flip.CI[1] < flip.MeanScore {
		t.Errorf("flip: epochs %d, mean %v, interval %v; want 4 and an interval around the mean", flip.Epochs, flip.MeanScore, flip.CI)
	}
	// Against candidate-a: three paired tasks, two lower, one equal: the
	// interval reaches 0, so no regression; per-task drops stay listed.
	if p := flip.Paired; p == nil || p.Tasks != 3 || p.Regression || p.MeanDelta >= 0 || p.CI[1] < 0 {
		t.Errorf("flip paired = %+v, want 3 tasks, a negative delta, no regression", p)
	}
	wantDrops := []string{"task_create_release_blocker: mean score 0.870 over 4 epochs, baseline 1.000",
		"memory_grounded_recent_work: mean score 0.946 over 4 epochs, baseline 1.000"}
	if diff := cmp.Diff(wantDrops, flip.Verdict.Regressions); diff != "" {
		t.Errorf("flip per-task regressions (-want +got):\n%s", diff)
	}
	// a's interval is [1, 1]; c's and flip's reach 1: no pair is distinguishable.
	wantPairs := [][2]string{{"candidate-a", "candidate-c"}, {"candidate-a", "flip"}, {"candidate-c", "flip"}}
	if diff := cmp.Diff(wantPairs, sum.NotDistinguishable); diff != "" {
		t.Errorf("frontier_not_distinguishable (-want +got):\n%s", diff)
	}

	// assay frontier reads the stored summaries and marks the same pairs.
	fr := run2(t, db, "frontier", "--pack", "packs/example.yaml", "--format", "json")
	var stored epochSummary
	if err := json.Unmarshal([]byte(fr.stdout), &stored); err != nil {
		t.Fatalf("frontier: %v\n%s", err, fr.stderr)
	}
	if diff := cmp.Diff(wantPairs, stored.NotDistinguishable); diff != "" {
		t.Errorf("assay frontier: frontier_not_distinguishable (-want +got):\n%s", diff)
	}

	// The same input and seed give the same interval (the turns are reused).
	again := run2(t, db, args...)
	var sum2 epochSummary
	if err := json.Unmarshal([]byte(again.stdout), &sum2); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sum.Candidates, sum2.Candidates); diff != "" {
		t.Errorf("a second run with the default seed differs (-first +second):\n%s", diff)
	}

	// Text: the interval and pass^k under the mean, flaky tasks, the pair.
	txt := run2(t, db, "verify", "--pack", "packs/example.yaml", "--run", run, "--run", "examples/runs/candidate-a",
		"--run", "examples/runs/candidate-c", "--seed", "7")
	for _, want := range []string{"mean score 95% interval [", "pass^4 0.333", "EPOCH  STATUS", "flaky tasks (epochs disagree on pass): memory_grounded_recent_work, task_create_release_blocker",
		"candidate-a and candidate-c: not distinguishable on this data"} {
		if !strings.Contains(txt.stdout, want) {
			t.Errorf("verify text lacks %q:\n%s", want, txt.stdout)
		}
	}
}

// run2 is run that accepts exit 0 and 1 (gates), failing on anything else.
func run2(t *testing.T, db string, args ...string) result {
	t.Helper()
	r := run(t, db, args...)
	if r.code > 1 {
		t.Fatalf("assay %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}
