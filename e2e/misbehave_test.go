package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyWithCrashingPlugins registers test plugins that panic on one
// case and exit in the middle of a batch, and verifies a run with them as a
// user would: the broken turns are unscored with scorer_error after one
// retry, every other turn is scored, and the run completes (exit 1: the
// unscored gate fails).
func TestVerifyWithCrashingPlugins(t *testing.T) {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	os.MkdirAll(plugins, 0o755)
	var bins []string
	for _, name := range []string{"test_panic", "test_exit"} {
		bin := filepath.Join(plugins, "assay-scorer-"+name)
		if err := goBuild(bin, "./host/pluginhost/testdata/plugins/"+name); err != nil {
			t.Fatal(err)
		}
		bins = append(bins, bin)
	}
	db := filepath.Join(dir, "assay.db")
	assayIn := func(args ...string) result {
		t.Helper()
		return runRaw(t, append([]string{"--plugin-dir", plugins, "--db", db}, args...)...)
	}
	if r := assayIn(append([]string{"plugins", "register"}, bins...)...); r.code != 0 {
		t.Fatalf("register: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := assayIn("scorers", "sync"); r.code != 0 {
		t.Fatalf("sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	pack := filepath.Join(dir, "pack.yaml")
	os.WriteFile(pack, []byte(`company: {id: acme, name: Acme}
personas: [cto]
tasks:
  - {label: panic, persona: cto, prompt: p, scorer: test_panic, kpis: {label_seen: true}}
  - {label: fine, persona: cto, prompt: p, scorer: test_panic, kpis: {label_seen: true}}
  - {label: exit, persona: cto, prompt: p, scorer: test_exit, kpis: {label_seen: true}}
  - {label: calm, persona: cto, prompt: p, scorer: test_exit, kpis: {label_seen: true}}
scoring: {process_weight: 0.5, kpi_weight: 0.5, min_mean_score: 0.1, min_finalize_rate: 0, max_error_rate: 1}
`), 0o644)
	turns := filepath.Join(dir, "turns.jsonl")
	var lines []string
	for _, l := range []string{"panic", "fine", "exit", "calm"} {
		lines = append(lines, `{"label":"`+l+`","trace":[{"type":"done","reply":"ok","finalized":true}]}`)
	}
	os.WriteFile(turns, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	out := filepath.Join(dir, "out")
	cmd := exec.Command(assay, "--plugin-dir", plugins, "--db", db, "verify", "--pack", pack, "--turns", turns, "--out", out)
	b, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("verify: %v, want exit 1 (the unscored gate)\n%s", err, b)
	}
	rb, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var results []struct {
		Label       string   `json:"label"`
		Status      string   `json:"status"`
		FailureTags []string `json:"failure_tags"`
		Diagnostics []string `json:"diagnostics"`
	}
	if err := json.Unmarshal(rb, &results); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"panic": "unscored", "fine": "scored", "exit": "unscored", "calm": "scored"}
	for _, r := range results {
		if r.Status != want[r.Label] {
			t.Errorf("%s: status %s, want %s (diagnostics %v)", r.Label, r.Status, want[r.Label], r.Diagnostics)
		}
		if r.Status == "unscored" && !contains(r.FailureTags, "scorer_error") {
			t.Errorf("%s: tags %v, want scorer_error", r.Label, r.FailureTags)
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
