package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrivateScorerWalkthrough follows examples/private-scorer/README.md as a
// newcomer would: build the private plugin, register it, watch the startup
// check refuse, sync, validate the pack, score a good and an invented turn.
func TestPrivateScorerWalkthrough(t *testing.T) {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	// A private plugin dir: the built-ins' manifest copied, plus ticket_linked.
	for _, name := range []string{"manifest.json"} {
		b, err := os.ReadFile(filepath.Join(pluginDir, name))
		if err != nil {
			t.Fatal(err)
		}
		// Binaries stay where TestMain built them: rewrite relative paths.
		linkPlugins(t, plugins)
		if err := os.WriteFile(filepath.Join(plugins, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(plugins, "assay-scorer-ticket_linked")
	if err := goBuild(bin, "./examples/private-scorer/cmd"); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "private.db")
	assayIn := func(args ...string) result {
		t.Helper()
		cmd := exec.Command(assay, append([]string{"--plugin-dir", plugins, "--db", db}, args...)...)
		cmd.Dir = root
		var so, se strings.Builder
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{code: code, stdout: so.String(), stderr: se.String()}
	}
	if r := assayIn("plugins", "register", bin); r.code != 0 {
		t.Fatalf("register: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := assayIn("pack", "validate", "examples/private-scorer/pack.yaml")
	if r.code != 3 || !strings.Contains(r.stderr, "ticket_linked") || !strings.Contains(r.stderr, "assay scorers sync") {
		t.Fatalf("before sync: exit %d, want 3 naming ticket_linked and the fix\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := assayIn("scorers", "sync"); r.code != 0 {
		t.Fatalf("sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := assayIn("pack", "validate", "examples/private-scorer/pack.yaml"); r.code != 0 {
		t.Fatalf("validate after sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := assayIn("doctor"); r.code != 0 {
		t.Fatalf("doctor after sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A database created later starts with the installed scorer set.
	fresh := runRaw(t, "--plugin-dir", plugins, "--db", filepath.Join(dir, "fresh.db"), "frontier", "--pack", "examples/private-scorer/pack.yaml")
	if fresh.code != 0 {
		t.Fatalf("a new database after sync: exit %d\n%s%s", fresh.code, fresh.stdout, fresh.stderr)
	}
	score := func(trace string) result {
		return assayIn("score", "--pack", "examples/private-scorer/pack.yaml", "--task", "cite_release_blocker",
			"--trace", "examples/private-scorer/testdata/"+trace,
			"--state-after", "examples/private-scorer/testdata/state_after.json")
	}
	good := score("cite_release_blocker.ndjson")
	if good.code != 0 || !strings.Contains(good.stdout, "turn score 1.000") {
		t.Errorf("good turn: exit %d\n%s%s", good.code, good.stdout, good.stderr)
	}
	bad := score("cite_release_blocker.invented.ndjson")
	if bad.code != 0 || !strings.Contains(bad.stdout, "ungrounded_answer") {
		t.Errorf("invented ticket: exit %d\n%s%s", bad.code, bad.stdout, bad.stderr)
	}
}
