package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// summary is the part of summary.json a harness runner reads.
type summary struct {
	Pack struct {
		Name   string `json:"name"`
		SHA256 string `json:"sha256"`
	} `json:"pack"`
	Candidates []candidate `json:"candidates"`
	Frontier   []string    `json:"frontier"`
}

type candidate struct {
	Candidate     string                      `json:"candidate"`
	N             int                         `json:"n"`
	MeanScore     float64                     `json:"mean_score"`
	FinalizeRate  float64                     `json:"finalize_rate"`
	ErrorRate     float64                     `json:"error_rate"`
	MeanLatencyS  *float64                    `json:"mean_latency_s"`
	MeanToolCalls float64                     `json:"mean_tool_calls"`
	MeanCostUSD   *float64                    `json:"mean_cost_usd"`
	Unscored      int                         `json:"unscored"`
	Missing       int                         `json:"missing"`
	Slices        map[string]slice            `json:"slices"`
	FailureTags   map[string]int              `json:"failure_tags"`
	ScorerVersion string                      `json:"scorer_version"`
	Gates         gates                       `json:"gates"`
	Eligible      bool                        `json:"eligible"`
	Verdict       struct{ Verdict string }    `json:"verdict"`
	Extra         map[string]*json.RawMessage `json:"-"`
}

type slice struct {
	N         int     `json:"n"`
	MeanScore float64 `json:"mean_score"`
}

type gates struct {
	Passed bool `json:"passed"`
	Failed []struct {
		Gate      string  `json:"gate"`
		Value     float64 `json:"value"`
		Threshold float64 `json:"threshold"`
	} `json:"failed"`
}

func f(v float64) *float64 { return &v }

// TestVerifyExampleRuns verifies the bundled example runs as `make demo`
// does and checks summary.json field by field against hand-computed values:
// candidate-a passes every gate, candidate-b fails three, candidate-c trades
// score for speed and cost and shares the frontier with a.
func TestVerifyExampleRuns(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	r := run(t, filepath.Join(dir, "assay.db"), "verify", "--pack", "packs/example.yaml",
		"--run", "examples/runs/candidate-a", "--run", "examples/runs/candidate-b", "--run", "examples/runs/candidate-c",
		"--out", out)
	if r.code != 1 {
		t.Fatalf("verify exit %d, want 1 (candidate-b fails a gate)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got summary
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Pack.Name != "Agentsys Engineering" || len(got.Pack.SHA256) != 64 {
		t.Errorf("pack = %+v", got.Pack)
	}
	if diff := cmp.Diff([]string{"candidate-a", "candidate-c"}, got.Frontier); diff != "" {
		t.Errorf("frontier (-want +got):\n%s", diff)
	}
	// Turn scores: process 0.35 + KPI 0.65; weights 1.25, 1, 1.
	// b: task turn errored and did not finalize: process .35, KPI 0 -> .1225.
	// c: task .35 + .65*.6 = .74; memory .35 + .65*(5/6) = .891667; validate 1.
	all := func(v float64) map[string]slice {
		return map[string]slice{"governance": {1, v}, "release": {1, v}, "task-write": {1, v},
			"grounding": {1, 1}, "memory": {1, 1}, "qa": {1, 1}, "tool-use": {1, 1}}
	}
	cSlices := map[string]slice{"governance": {1, .74}, "release": {1, .74}, "task-write": {1, .74},
		"grounding": {1, .891666667}, "memory": {1, .891666667}, "qa": {1, 1}, "tool-use": {1, 1}}
	want := []candidate{
		{Candidate: "candidate-a", N: 3, MeanScore: 1, FinalizeRate: 1, ErrorRate: 0, MeanLatencyS: f((41.2 + 28.7 + 55.3) / 3),
			MeanToolCalls: 2, MeanCostUSD: f(0.202 / 3), Slices: all(1), FailureTags: map[string]int{},
			Gates: gates{Passed: true}, Eligible: true},
		{Candidate: "candidate-b", N: 3, MeanScore: (1.25*.1225 + 2) / 3.25, FinalizeRate: 2.0 / 3, ErrorRate: 1.0 / 3,
			MeanLatencyS: f((61.0 + 35.2 + 140.4) / 3), MeanToolCalls: 4.0 / 3, MeanCostUSD: f(0.208 / 3), Slices: all(.1225),
			FailureTags: map[string]int{"finalize_missing": 1, "latency_over_budget": 1, "state_not_changed": 1}},
		{Candidate: "candidate-c", N: 3, MeanScore: (1.25*.74 + .891666667 + 1) / 3.25, FinalizeRate: 1, ErrorRate: 0,
			MeanLatencyS: f((18.4 + 12.9 + 21.6) / 3), MeanToolCalls: 1, MeanCostUSD: f(0.053 / 3), Slices: cSlices,
			FailureTags: map[string]int{"state_not_changed": 1}, Gates: gates{Passed: true}, Eligible: true},
	}
	near := cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-6 })
	ignore := cmpopts.IgnoreFields(candidate{}, "ScorerVersion", "Gates", "Verdict")
	if diff := cmp.Diff(want, got.Candidates, near, ignore); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
	// Gates: b fails mean score, finalize rate and error rate, each with its value and threshold.
	var bGates []string
	for _, g := range got.Candidates[1].Gates.Failed {
		bGates = append(bGates, g.Gate)
	}
	if diff := cmp.Diff([]string{"min_mean_score", "min_finalize_rate", "max_error_rate"}, bGates); diff != "" {
		t.Errorf("candidate-b failed gates (-want +got):\n%s", diff)
	}
	if g := got.Candidates[1].Gates.Failed[0]; math.Abs(g.Value-0.6625) > 1e-9 || g.Threshold != 0.75 {
		t.Errorf("min_mean_score gate = %+v, want value .6625 threshold .75", g)
	}
	for i, c := range got.Candidates {
		if c.Gates.Passed != want[i].Gates.Passed || len(c.ScorerVersion) != 64 || c.ScorerVersion != got.Candidates[0].ScorerVersion {
			t.Errorf("%s: gates passed %t scorer_version %q", c.Candidate, c.Gates.Passed, c.ScorerVersion)
		}
	}
	if v := got.Candidates[0].Verdict.Verdict; v != "PASS" {
		t.Errorf("candidate-a verdict %s, want PASS", v)
	}
	if v := got.Candidates[1].Verdict.Verdict; v != "FAIL" {
		t.Errorf("candidate-b verdict %s, want FAIL", v)
	}

	// results.json: one object per turn, with the fields a harness reads.
	rb, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var results []map[string]any
	if err := json.Unmarshal(rb, &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != 9 {
		t.Fatalf("results.json has %d turns, want 9", len(results))
	}
	for _, k := range []string{"candidate", "label", "persona", "status", "process_score", "kpi_score", "turn_score",
		"finalized", "error", "latency_s", "tool_calls", "cost_usd", "checks", "failure_tags", "scorer"} {
		if _, ok := results[0][k]; !ok {
			t.Errorf("results.json turn lacks %q", k)
		}
	}

	// The frontier command reads the same runs back from the database.
	fr := run(t, filepath.Join(dir, "assay.db"), "frontier", "--pack", "packs/example.yaml", "--format", "json")
	if fr.code != 0 || !strings.Contains(fr.stdout, `"frontier": [`) {
		t.Fatalf("frontier exit %d\n%s\n%s", fr.code, fr.stdout, fr.stderr)
	}
	var rep struct{ Frontier []string }
	if err := json.Unmarshal([]byte(fr.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"candidate-a", "candidate-c"}, rep.Frontier); diff != "" {
		t.Errorf("stored frontier (-want +got):\n%s", diff)
	}
}

// TestVerifyExitCodes: 0 all gates pass, 1 a gate failed, 2 invalid input
// (an unreadable run directory, a bad turns line), 3 the host cannot run (a
// plugin binary changed since it was registered).
func TestVerifyExitCodes(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	verifyArgs := func(extra ...string) []string {
		return append([]string{"verify", "--pack", "packs/example.yaml"}, extra...)
	}
	if r := run(t, db, verifyArgs("--run", "examples/runs/candidate-a")...); r.code != 0 {
		t.Errorf("good candidate: exit %d, want 0\n%s", r.code, r.stderr)
	}
	if r := run(t, db, verifyArgs("--run", "examples/runs/candidate-b")...); r.code != 1 || !strings.Contains(r.stdout, "gate FAILED: min_mean_score") {
		t.Errorf("gate failure: exit %d, want 1 naming the gate\n%s", r.code, r.stdout)
	}
	missing := filepath.Join(dir, "no-such-run")
	if r := run(t, db, verifyArgs("--run", missing)...); r.code != 2 || !strings.Contains(r.stderr, missing) {
		t.Errorf("missing run dir: exit %d, want 2 naming %s\n%s", r.code, missing, r.stderr)
	}
	turns := filepath.Join(dir, "turns.jsonl")
	os.WriteFile(turns, []byte(`{"label":"validate_delivery_tools","trace":[{"type":"done","reply":"pass","finalized":true}]}`+"\n{oops\n"), 0o644)
	if r := run(t, db, verifyArgs("--turns", turns)...); r.code != 2 || !strings.Contains(r.stderr, turns+":2:2") {
		t.Errorf("bad turns line: exit %d, want 2 with its position\n%s", r.code, r.stderr)
	}

	// A plugin binary changed after registration: the host refuses to run it.
	plugins := filepath.Join(dir, "plugins")
	os.MkdirAll(plugins, 0o755)
	entries, _ := os.ReadDir(pluginDir)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(pluginDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "assay-scorer-task_state" {
			b = append(b, 0) // still runs, but is not the registered binary
		}
		os.WriteFile(filepath.Join(plugins, e.Name()), b, 0o755)
	}
	cmd := []string{"--plugin-dir", plugins, "--db", db, "verify", "--pack", "packs/example.yaml", "--run", "examples/runs/candidate-a"}
	r := runRaw(t, cmd...)
	if r.code != 3 || !strings.Contains(r.stderr, "task_state") || !strings.Contains(strings.ToLower(r.stderr), "sha256") {
		t.Errorf("changed plugin: exit %d, want 3 naming task_state and its sha256\n%s", r.code, r.stderr)
	}
}

// TestVerifyBaselineRegressions: with --baseline, a task whose turn score fell
// by more than 0.05 is a regression in the candidate's verdict, which is
// stored with the run; the baseline may be verified in the same invocation or
// read back from the database.
func TestVerifyBaselineRegressions(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	out := filepath.Join(dir, "out")
	r := run(t, db, "verify", "--pack", "packs/example.yaml", "--run", "examples/runs/candidate-b",
		"--run", "examples/runs/candidate-a", "--baseline", "candidate-a", "--out", out)
	if r.code != 1 {
		t.Fatalf("verify exit %d\n%s", r.code, r.stderr)
	}
	type verdict struct {
		Verdict     string   `json:"verdict"`
		Regressions []string `json:"regressions"`
	}
	var sum struct {
		Candidates []struct {
			Candidate string  `json:"candidate"`
			RunID     int64   `json:"run_id"`
			Verdict   verdict `json:"verdict"`
		} `json:"candidates"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	got := map[string]verdict{}
	var bRun int64
	for _, c := range sum.Candidates {
		got[c.Candidate] = c.Verdict
		if c.Candidate == "candidate-b" {
			bRun = c.RunID
		}
	}
	if diff := cmp.Diff([]string{"task_create_release_blocker: turn score 0.122, baseline 1.000"}, got["candidate-b"].Regressions); diff != "" {
		t.Errorf("candidate-b regressions (-want +got):\n%s", diff)
	}
	if len(got["candidate-a"].Regressions) != 0 {
		t.Errorf("the baseline regressed against itself: %v", got["candidate-a"].Regressions)
	}
	// The verdict is stored with the run.
	rep := run(t, db, "eval", "--report", fmt.Sprint(bRun), "--format", "json")
	if rep.code != 0 || !strings.Contains(rep.stdout, "task_create_release_blocker: turn score 0.122") {
		t.Errorf("eval --report %d: exit %d\n%s%s", bRun, rep.code, rep.stdout, rep.stderr)
	}

	// A stored baseline: candidate-c against candidate-a's recorded run.
	// c's task turn is .74 (a drop of .26) and its memory turn .8917 (.108);
	// its validate turn equals a's.
	r = run(t, db, "verify", "--pack", "packs/example.yaml", "--run", "examples/runs/candidate-c",
		"--baseline", "candidate-a", "--format", "json")
	if r.code != 0 {
		t.Fatalf("verify c: exit %d\n%s", r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	want := []string{"task_create_release_blocker: turn score 0.740, baseline 1.000",
		"memory_grounded_recent_work: turn score 0.892, baseline 1.000"}
	if diff := cmp.Diff(want, sum.Candidates[0].Verdict.Regressions); diff != "" {
		t.Errorf("candidate-c regressions against the stored baseline (-want +got):\n%s", diff)
	}
	if v := sum.Candidates[0].Verdict.Verdict; v != "PASS_WITH_WARNINGS" {
		t.Errorf("candidate-c verdict %s, want PASS_WITH_WARNINGS (gates passed; regressions are warnings)", v)
	}
	// An unknown baseline is invalid input.
	if r := run(t, db, "verify", "--pack", "packs/example.yaml", "--run", "examples/runs/candidate-c", "--baseline", "nobody"); r.code != 2 {
		t.Errorf("unknown baseline: exit %d, want 2\n%s", r.code, r.stderr)
	}
}

// TestScoreOneTurn: assay score explains a turn; a malformed snapshot is
// invalid input, reported once with its position, and nothing is scored.
func TestScoreOneTurn(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	base := []string{"score", "--pack", "testdata/fixtures/pack.yaml", "--task", "task_create_release_blocker",
		"--trace", "testdata/fixtures/traces/task_create_release_blocker.good.ndjson",
		"--state-before", "testdata/fixtures/state/task_create_release_blocker.before.json"}
	good := run(t, db, append(base, "--state-after", "testdata/fixtures/state/task_create_release_blocker.good.after.json")...)
	if good.code != 0 || !strings.Contains(good.stdout, "kpi score 1.000") || !strings.Contains(good.stdout, "priority_min") {
		t.Errorf("good turn: exit %d\n%s%s", good.code, good.stdout, good.stderr)
	}
	bad := filepath.Join(dir, "after.json")
	os.WriteFile(bad, []byte("{\"tasks\": [\n  {\"id\": 7, \"priority\": \"high\"}\n]}\n"), 0o644)
	r := run(t, db, append(base, "--state-after", bad)...)
	if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, bad+":2:") != 1 {
		t.Errorf("malformed snapshot: exit %d, want 2 with one positioned error and no report\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
