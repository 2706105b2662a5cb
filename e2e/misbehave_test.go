package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// misbehaving is a plugin directory and database with test plugins that
// misbehave on chosen labels (see host/pluginhost/testdata/plugins),
// registered and synced.
type misbehaving struct {
	t       *testing.T
	dir, db string
	plugins string
}

func newMisbehaving(t *testing.T, names ...string) *misbehaving {
	t.Helper()
	m := &misbehaving{t: t, dir: t.TempDir()}
	m.plugins, m.db = filepath.Join(m.dir, "plugins"), filepath.Join(m.dir, "assay.db")
	os.MkdirAll(m.plugins, 0o755)
	var bins []string
	for _, name := range names {
		bin := filepath.Join(m.plugins, "assay-scorer-"+name)
		if err := goBuild(bin, "./host/pluginhost/testdata/plugins/"+name); err != nil {
			t.Fatal(err)
		}
		bins = append(bins, bin)
	}
	if r := m.assay(append([]string{"plugins", "register"}, bins...)...); r.code != 0 {
		t.Fatalf("register: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := m.assay("scorers", "sync"); r.code != 0 {
		t.Fatalf("sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return m
}

func (m *misbehaving) assay(args ...string) result {
	m.t.Helper()
	return runRaw(m.t, append([]string{"--plugin-dir", m.plugins, "--db", m.db}, args...)...)
}

// task is one pack task: its label and scorer.
type task struct{ label, scorer string }

// writeInputs writes a pack of tasks and a turns file with one finalized
// turn for each, and returns their paths.
func (m *misbehaving) writeInputs(tasks []task) (pack, turns string) {
	var yaml, lines []string
	for _, tk := range tasks {
		yaml = append(yaml, fmt.Sprintf("  - {label: %s, persona: cto, prompt: p, scorer: %s, kpis: {label_seen: true}}", tk.label, tk.scorer))
		lines = append(lines, `{"label":"`+tk.label+`","trace":[{"type":"done","reply":"ok","finalized":true}]}`)
	}
	pack, turns = filepath.Join(m.dir, "pack.yaml"), filepath.Join(m.dir, "turns.jsonl")
	os.WriteFile(pack, []byte("company: {id: acme, name: Acme}\npersonas: [cto]\ntasks:\n"+strings.Join(yaml, "\n")+
		"\nscoring: {process_weight: 0.5, kpi_weight: 0.5, min_mean_score: 0.1, min_finalize_rate: 0, max_error_rate: 1}\n"), 0o644)
	os.WriteFile(turns, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	return pack, turns
}

// turnResult is one turn of results.json.
type turnResult struct {
	Label       string   `json:"label"`
	Status      string   `json:"status"`
	FailureTags []string `json:"failure_tags"`
	Diagnostics []string `json:"diagnostics"`
}

// verify runs assay verify and returns its exit code and results.json.
func (m *misbehaving) verify(pack, turns string, extra ...string) (int, []turnResult, string) {
	m.t.Helper()
	out := filepath.Join(m.dir, "out")
	r := m.assay(append([]string{"verify", "--pack", pack, "--turns", turns, "--out", out}, extra...)...)
	rb, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		m.t.Fatalf("verify: exit %d, no results.json: %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	var results []turnResult
	if err := json.Unmarshal(rb, &results); err != nil {
		m.t.Fatal(err)
	}
	return r.code, results, r.stdout + r.stderr
}

// checkUnscored checks that exactly the turns in unscored are unscored,
// each with scorer_error and a diagnostic containing reason.
func checkUnscored(t *testing.T, results []turnResult, unscored map[string]bool, reason string) {
	t.Helper()
	seen := 0
	for _, r := range results {
		want := "scored"
		if unscored[r.Label] {
			want, seen = "unscored", seen+1
		}
		if r.Status != want {
			t.Errorf("%s: status %s, want %s (diagnostics %v)", r.Label, r.Status, want, r.Diagnostics)
		}
		if r.Status == "unscored" && (!contains(r.FailureTags, "scorer_error") || !strings.Contains(strings.Join(r.Diagnostics, "\n"), reason)) {
			t.Errorf("%s: tags %v, diagnostics %v, want scorer_error and %q", r.Label, r.FailureTags, r.Diagnostics, reason)
		}
	}
	if seen != len(unscored) {
		t.Errorf("%d of the %d turns that should be unscored are in results.json", seen, len(unscored))
	}
}

// TestVerifyWithCrashingPlugins registers test plugins that panic on one
// case and exit in the middle of a batch, and verifies a run with them as a
// user would: the broken turns are unscored with scorer_error, every other
// turn is scored, and the run completes (exit 1: the unscored gate fails).
func TestVerifyWithCrashingPlugins(t *testing.T) {
	m := newMisbehaving(t, "test_panic", "test_exit")
	pack, turns := m.writeInputs([]task{{"panic", "test_panic"}, {"fine", "test_panic"}, {"exit", "test_exit"}, {"calm", "test_exit"}})
	code, results, out := m.verify(pack, turns)
	if code != 1 {
		t.Fatalf("verify: exit %d, want 1 (the unscored gate)\n%s", code, out)
	}
	checkUnscored(t, results, map[string]bool{"panic": true, "exit": true}, "could not score")
	// "calm" shared a batch with "exit", whose crash lost it: it is scored
	// on a retry, and the text and the JSON say so, as its diagnostics do.
	checkScoredOnRetry(t, m, results, out, []string{"calm"})
}

// checkScoredOnRetry checks that the turns scored on a retry in this run
// are want, by summary.json's scored_on_retry and scored_on_retry_labels
// and by the text output's line naming them; with results, also by the
// diagnostics in results.json (a resume's reused turns keep the
// diagnostics of the run that scored them, so it passes none).
func checkScoredOnRetry(t *testing.T, m *misbehaving, results []turnResult, out string, want []string) {
	t.Helper()
	if results != nil {
		var noted []string
		for _, r := range results {
			if r.Status == "scored" && strings.Contains(strings.Join(r.Diagnostics, "\n"), "host: retried") {
				noted = append(noted, r.Label)
			}
		}
		if strings.Join(noted, ",") != strings.Join(want, ",") {
			t.Errorf("turns whose diagnostics say they were retried = %v, want %v", noted, want)
		}
	}
	var sum struct {
		Candidates []struct {
			ScoredOnRetry       int      `json:"scored_on_retry"`
			ScoredOnRetryLabels []string `json:"scored_on_retry_labels"`
		} `json:"candidates"`
	}
	b, err := os.ReadFile(filepath.Join(m.dir, "out", "summary.json"))
	if err == nil {
		err = json.Unmarshal(b, &sum)
	}
	if err != nil || len(sum.Candidates) != 1 {
		t.Fatalf("summary.json: %v, %d candidates", err, len(sum.Candidates))
	}
	c := sum.Candidates[0]
	if c.ScoredOnRetry != len(want) || strings.Join(c.ScoredOnRetryLabels, ",") != strings.Join(want, ",") {
		t.Errorf("summary.json scored_on_retry = %d %v, want %d %v", c.ScoredOnRetry, c.ScoredOnRetryLabels, len(want), want)
	}
	line := "  scored on a retry (after a lost batch or a failed first try; each turn's diagnostics say how): " + strings.Join(want, ", ") + "\n"
	if len(want) > 20 { // the text names 20 and counts the rest
		line = fmt.Sprintf("  scored on a retry (after a lost batch or a failed first try; each turn's diagnostics say how): %s and %d more (%d in all; scored_on_retry_labels in summary.json and --format json)\n",
			strings.Join(want[:20], ", "), len(want)-20, len(want))
	}
	if got := strings.Contains(out, "scored on a retry"); len(want) == 0 && got {
		t.Errorf("the text output names turns scored on a retry, want none:\n%s", out)
	} else if len(want) > 0 && !strings.Contains(out, line) {
		t.Errorf("the text output lacks %q:\n%s", line, out)
	}
}

// TestCrashingTurnCostsOnlyItself (issue 12 item 4): a plugin that exits on
// chosen labels, scored in many small batches at once, loses only those
// labels, and a resume scores nothing more and loses nothing more.
func TestCrashingTurnCostsOnlyItself(t *testing.T) {
	m := newMisbehaving(t, "test_exit")
	var tasks []task
	exits := map[string]bool{}
	for i := 0; i < 60; i++ {
		label := fmt.Sprintf("turn_%02d", i)
		if i%13 == 5 {
			label = fmt.Sprintf("exit_%02d", i)
			exits[label] = true
		}
		tasks = append(tasks, task{label, "test_exit"})
	}
	pack, turns := m.writeInputs(tasks)
	for _, run := range []string{"first run", "resume"} {
		code, results, out := m.verify(pack, turns, "--batch-size", "4")
		if code != 1 {
			t.Fatalf("%s: exit %d, want 1 (the unscored gate)\n%s", run, code, out)
		}
		t.Run(run, func(t *testing.T) { checkUnscored(t, results, exits, "plugin broke") })
		if run == "first run" { // the turns that lost their batch to a crash
			var lost []string
			for _, r := range results {
				if r.Status == "scored" && strings.Contains(strings.Join(r.Diagnostics, "\n"), "host: retried") {
					lost = append(lost, r.Label)
				}
			}
			if len(lost) == 0 {
				t.Fatalf("first run: no turn was scored on a retry; the test cannot tell\n%s", out)
			}
			checkScoredOnRetry(t, m, results, out, lost)
		} else { // every scored turn is reused; the crashing ones fail again
			checkScoredOnRetry(t, m, nil, out, nil)
		}
	}
}

// TestHangingTurnIsNotASlowRun (issue 12 item 5): a plugin that hangs on
// chosen labels costs a small multiple of the call deadline, and only those
// labels are unscored, with a reason naming the deadline.
func TestHangingTurnIsNotASlowRun(t *testing.T) {
	m := newMisbehaving(t, "test_sleep")
	var tasks []task
	hangs := map[string]bool{"sleep_07": true, "sleep_31": true}
	for i := 0; i < 40; i++ {
		label := fmt.Sprintf("turn_%02d", i)
		if l := fmt.Sprintf("sleep_%02d", i); hangs[l] {
			label = l
		}
		tasks = append(tasks, task{label, "test_sleep"})
	}
	pack, turns := m.writeInputs(tasks)
	const base = time.Second
	begin := time.Now()
	code, results, out := m.verify(pack, turns, "--batch-size", "8", "--call-timeout", base.String())
	elapsed := time.Since(begin)
	if code != 1 {
		t.Fatalf("verify: exit %d, want 1 (the unscored gate)\n%s", code, out)
	}
	checkUnscored(t, results, hangs, "no answer within 1.05s")
	batchDeadline := base + 8*base/20
	if limit := 6 * batchDeadline; elapsed > limit {
		t.Errorf("verify took %v with two hanging turns, want at most %v (6 × the %v deadline of a batch)", elapsed, limit, batchDeadline)
	}
	t.Logf("verify with two hanging turns: %v", elapsed)
}

// TestCallTimeoutFlag: --call-timeout takes a positive duration, on score
// as on verify; anything else is a usage error (exit 2).
func TestCallTimeoutFlag(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	score := []string{"score", "--pack", "testdata/fixtures/pack.yaml", "--task", "task_create_release_blocker",
		"--trace", "testdata/fixtures/traces/task_create_release_blocker.good.ndjson"}
	tests := []struct {
		value    string
		wantCode int
		wantErr  string
	}{
		{"5s", 0, ""},
		{"0s", 2, "--call-timeout: want a positive duration, got 0s"},
		{"-1s", 2, "--call-timeout: want a positive duration, got -1s"},
	}
	for _, tt := range tests {
		r := run(t, db, append(score, "--call-timeout", tt.value)...)
		if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.wantErr) {
			t.Errorf("assay score --call-timeout %s: exit %d, stderr %q; want exit %d and %q", tt.value, r.code, r.stderr, tt.wantCode, tt.wantErr)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// TestHangingOnEveryCallExits3 (issue 12 item 5): a scorer that hangs on
// every call is a host that could not run (exit 3, the scorer named), not a
// failed gate, and it costs a small multiple of the deadline, not minutes.
func TestHangingOnEveryCallExits3(t *testing.T) {
	m := newMisbehaving(t, "test_sleep")
	var tasks []task
	for i := 0; i < 12; i++ {
		tasks = append(tasks, task{fmt.Sprintf("sleep_%02d", i), "test_sleep"})
	}
	pack, turns := m.writeInputs(tasks)
	const base = 500 * time.Millisecond
	begin := time.Now()
	code, _, out := m.verify(pack, turns, "--batch-size", "4", "--call-timeout", base.String())
	elapsed := time.Since(begin)
	if code != 3 || !strings.Contains(out, "test_sleep") {
		t.Fatalf("verify with a scorer hanging on every call: exit %d, want 3 naming test_sleep\n%s", code, out)
	}
	if limit := 40 * base; elapsed > limit {
		t.Errorf("verify took %v, want at most %v", elapsed, limit)
	}
	t.Logf("verify with every call hanging: %v", elapsed)
}
