package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGoInstallDistinctBinaries installs ./cmd/... into an empty GOBIN, as
// `go install` does for a user without make, and wants assay plus one
// assay-scorer-<id> per built-in plugin (issue 15, item 5).
func TestGoInstallDistinctBinaries(t *testing.T) {
	gobin := t.TempDir()
	cmd := exec.Command("go", "install", "-trimpath", "./cmd/...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/...: %v\n%s", err, out)
	}
	entries, err := os.ReadDir(gobin)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{"assay", "assay-scorer-answer_keywords", "assay-scorer-composite",
		"assay-scorer-memory_grounding", "assay-scorer-stigmergic", "assay-scorer-task_state",
		"assay-scorer-tool_sequence"}
	if !slices.Equal(got, want) {
		t.Fatalf("go install ./cmd/... into GOBIN = %q, want %q", got, want)
	}
}

// TestPluginsBesideBinary copies assay to a directory with a plugins/
// folder beside it and runs it from elsewhere without --plugin-dir: it uses
// that folder. Without a manifest anywhere it names the manifest it looked
// for instead of listing every schema scorer as missing (item 5).
func TestPluginsBesideBinary(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "assay")
	copyFile(t, assay, exe)
	plugins := filepath.Join(dir, "plugins")
	cwd := t.TempDir()
	env := environWithout("ASSAY_PLUGIN_DIR")

	r := runIn(t, cwd, env, exe, "--db", filepath.Join(cwd, "a.db"), "pack", "validate", filepath.Join(root, "packs", "example.yaml"))
	wantMsg := "no plugin manifest at " + filepath.Join(cwd, "bin", "plugins", "manifest.json") +
		" (set --plugin-dir or ASSAY_PLUGIN_DIR, or run `make build`)"
	if r.code != 3 || !strings.Contains(r.stderr, wantMsg) || strings.Contains(r.stderr, "no plugin\n") || strings.Contains(r.stderr, "scorers sync") {
		t.Fatalf("pack validate without a manifest: exit %d, stderr %q, want exit 3 and %q", r.code, r.stderr, wantMsg)
	}

	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	var bins []string
	matches, _ := filepath.Glob(filepath.Join(pluginDir, "assay-scorer-*"))
	for _, m := range matches {
		out := filepath.Join(plugins, filepath.Base(m))
		copyFile(t, m, out)
		bins = append(bins, out)
	}
	if r := runIn(t, cwd, env, exe, append([]string{"--plugin-dir", plugins, "plugins", "register"}, bins...)...); r.code != 0 {
		t.Fatalf("plugins register: exit %d\n%s", r.code, r.stderr)
	}
	r = runIn(t, cwd, env, exe, "--db", filepath.Join(cwd, "a.db"), "pack", "validate", filepath.Join(root, "packs", "example.yaml"))
	if r.code != 0 {
		t.Fatalf("pack validate with plugins/ beside the binary: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// environWithout is this process's environment without the variables
// named.
func environWithout(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(names, k) {
			env = append(env, kv)
		}
	}
	return env
}

func runIn(t *testing.T, dir string, env []string, exe string, args ...string) result {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Dir, cmd.Env = dir, env
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v", exe, err)
	}
	return result{code: code, stdout: so.String(), stderr: se.String()}
}

// copyFile copies a file, keeping its permission bits (a binary stays
// executable).
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, st.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

// TestConformancePrintsWhatToChange runs `assay plugins conformance` on a
// plugin that drops its declared failure tag: the finding is printed with
// what to change, and the exit code is 1 (issue 15, item 4).
func TestConformancePrintsWhatToChange(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "assay-scorer-test_dropped_tag")
	if err := goBuild(bin, "./e2e/testdata/plugins/test_dropped_tag"); err != nil {
		t.Fatal(err)
	}
	r := runRaw(t, "plugins", "conformance", bin)
	for _, want := range []string{
		"FAIL  failure_tags",
		`declared failure tag "ungrounded_answer" is not in Result.FailureTags`,
		"what to change: give a failed check the FailureTag its KPI declares and copy it into Result.FailureTags",
		"ok    unset_kpis",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plugins conformance %s: stdout lacks %q\n%s", bin, want, r.stdout)
		}
	}
	if r.code != 1 {
		t.Errorf("plugins conformance %s = exit %d, want 1", bin, r.code)
	}
}
