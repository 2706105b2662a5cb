package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// makeVars are what a make running the tests passes to the makes below it
// (its command-line variables, such as BUILDFLAGS=, travel in MAKEFLAGS)
// and the build settings it names: the scaffold's make runs without them.
var makeVars = []string{"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "BUILDFLAGS", "CGO_ENABLED"}

// TestPluginsNewScaffold is issue 15 item 2 as a new author would do it:
// `assay plugins new` outside the repository, then with no edits `go test
// ./...`, `make install` (build, register, sync), `assay plugins
// conformance` and `assay verify` scoring with the new scorer.
func TestPluginsNewScaffold(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	dir := t.TempDir()
	mod := filepath.Join(dir, "acme_refunds")
	plugins := filepath.Join(dir, "plugins")
	db := filepath.Join(dir, "assay.db")
	r := runRaw(t, "plugins", "new", "acme_refunds", "--dir", mod)
	if r.code != 0 || !strings.Contains(r.stdout, "go.mod") {
		t.Fatalf("plugins new: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	inMod := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = mod
		cmd.Env = environWithout(makeVars...) // the scaffold's make as an author runs it, not under ours
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s in the scaffold: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	inMod("go", "vet", "./...")
	inMod("go", "test", "./...")
	inMod("make", "install", "ASSAY="+assay, "PLUGIN_DIR="+plugins, "DB="+db)
	bin := filepath.Join(plugins, "assay-scorer-acme_refunds")
	if r := runRaw(t, "plugins", "conformance", bin); r.code != 0 {
		t.Fatalf("plugins conformance: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	pack := filepath.Join(dir, "pack.yaml")
	turns := filepath.Join(dir, "turns.jsonl")
	writeText(t, pack, `company: {id: acme, name: Acme}
personas: [cto]
tasks:
  - {label: refund, persona: cto, prompt: p, scorer: acme_refunds, kpis: {acme_refunds_keywords: [refund, invoice]}}
scoring: {process_weight: 0.5, kpi_weight: 0.5, min_mean_score: 0, min_finalize_rate: 0, max_error_rate: 1}
`)
	writeText(t, turns, turnLine("good", "refund", "refund for invoice 7 sent")+"\n"+turnLine("bad", "refund", "done")+"\n")
	out := filepath.Join(dir, "out")
	r = runRaw(t, "--plugin-dir", plugins, "--db", db, "verify", "--pack", pack, "--turns", turns, "--out", out)
	if r.code > 1 {
		t.Fatalf("verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var results []turnOut
	readJSON(t, filepath.Join(out, "results.json"), &results)
	tags := map[string][]string{}
	for _, tr := range results {
		tags[tr.Candidate] = tr.FailureTags
	}
	if len(tags["good"]) != 0 || !slices.Contains(tags["bad"], "ungrounded_answer") {
		t.Errorf("failure tags per candidate = %v, want none for good and ungrounded_answer for bad", tags)
	}
	if _, err := os.Stat(filepath.Join(mod, "bin", "assay-scorer-acme_refunds")); err != nil {
		t.Errorf("make install built no bin/assay-scorer-acme_refunds: %v", err)
	}
	checkLean(t, bin) // the scaffold's Makefile builds lean, as assay's does
}
