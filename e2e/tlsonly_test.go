package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTLSOnlyPluginRun: a plugin that starts only when the host offers
// AutoMTLS (written for the hosts before the private Unix socket) still
// registers and scores a verify run, and the run says it was started with
// AutoMTLS, in the text output and in summary.json (docs/plugins.md, "The
// connection").
func TestTLSOnlyPluginRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	bin := filepath.Join(plugins, "assay-scorer-test_tlsonly")
	if err := goBuild(bin, "./host/pluginhost/testdata/plugins/test_tlsonly"); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "assay.db")
	registerPlugin(t, plugins, db, bin)
	pack := filepath.Join(dir, "pack.yaml")
	turns := filepath.Join(dir, "turns.jsonl")
	writeText(t, pack, `company: {id: acme, name: Acme}
personas: [cto]
tasks:
  - {label: refund, persona: cto, prompt: p, scorer: test_tlsonly, kpis: {label_seen: true}}
scoring: {process_weight: 0.5, kpi_weight: 0.5, min_mean_score: 0, min_finalize_rate: 0, max_error_rate: 1}
`)
	writeText(t, turns, turnLine("good", "refund", "refund sent")+"\n")
	out := filepath.Join(dir, "out")
	r := runRaw(t, "--plugin-dir", plugins, "--db", db, "verify", "--pack", pack, "--turns", turns, "--out", out)
	if r.code > 1 {
		t.Fatalf("verify with test_tlsonly: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	const want = "scorer test_tlsonly did not start without TLS; it was started with AutoMTLS"
	if !strings.Contains(r.stdout, "warning: "+want) {
		t.Errorf("verify stdout lacks the AutoMTLS warning:\n%s", r.stdout)
	}
	var results []turnOut
	readJSON(t, filepath.Join(out, "results.json"), &results)
	if len(results) != 1 || !strings.HasPrefix(results[0].Status, "scored") {
		t.Errorf("results = %+v, want one scored turn", results)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"warnings": [`) || !strings.Contains(string(b), want) {
		t.Errorf("summary.json lacks the AutoMTLS warning:\n%s", b)
	}
}
