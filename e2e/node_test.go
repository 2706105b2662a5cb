package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNodeScorer is issue 15 item 6: examples/node-scorer, a scorer in
// JavaScript on Node.js that performs go-plugin's handshake (on a private
// Unix socket; TLS when a previous host offers AutoMTLS, see
// TestPreviousHostTransport) with no Go, passes `assay plugins conformance` and scores a
// verify run. It skips, saying why, without node and npm.
func TestNodeScorer(t *testing.T) {
	if !nodeReady(t) {
		t.Skip("node or npm not found: the Node.js scorer example needs both")
	}
	example := filepath.Join(root, "examples", "node-scorer")
	script := filepath.Join(example, "scorer.js")
	r := runRaw(t, "plugins", "conformance", script)
	if r.code != 0 || strings.Count(r.stdout, "ok ") != 8 {
		t.Fatalf("plugins conformance %s: exit %d, want 0 and eight ok lines\n%s%s", script, r.code, r.stdout, r.stderr)
	}

	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	install := exec.Command(filepath.Join(example, "install.sh"), plugins)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install.sh %s: %v\n%s", plugins, err, out)
	}
	bin := filepath.Join(plugins, "assay-scorer-node_keywords")
	db := filepath.Join(dir, "assay.db")
	registerPlugin(t, plugins, db, bin)
	pack := filepath.Join(dir, "pack.yaml")
	turns := filepath.Join(dir, "turns.jsonl")
	writeText(t, pack, `company: {id: acme, name: Acme}
personas: [cto]
tasks:
  - {label: refund, persona: cto, prompt: p, scorer: node_keywords, kpis: {node_keywords: [refund, invoice]}}
scoring: {process_weight: 0.5, kpi_weight: 0.5, min_mean_score: 0, min_finalize_rate: 0, max_error_rate: 1}
`)
	writeText(t, turns, turnLine("good", "refund", "refund for invoice 7 sent")+"\n"+turnLine("bad", "refund", "done")+"\n")
	out := filepath.Join(dir, "out")
	r = runRaw(t, "--plugin-dir", plugins, "--db", db, "verify", "--pack", pack, "--turns", turns, "--out", out)
	if r.code > 1 {
		t.Fatalf("verify with the Node.js scorer: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var results []turnOut
	readJSON(t, filepath.Join(out, "results.json"), &results)
	got := map[string]string{}
	for _, tr := range results {
		got[tr.Candidate] = tr.Status + " " + strings.Join(tr.FailureTags, ",")
	}
	if !strings.HasPrefix(got["bad"], "scored") || !strings.Contains(got["bad"], "ungrounded_answer") || strings.Contains(got["good"], "ungrounded_answer") {
		t.Errorf("status and failure tags per candidate = %v, want both scored and only bad tagged ungrounded_answer", got)
	}
}

// nodeReady reports whether node and npm are present, installing the
// example's node_modules when they are missing.
func nodeReady(t *testing.T) bool {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Logf("%s not found", tool)
			return false
		}
	}
	example := filepath.Join(root, "examples", "node-scorer")
	if _, err := os.Stat(filepath.Join(example, "node_modules")); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = example
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", example, err, out)
		}
	}
	return true
}
