package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/buildflags"
)

// bin is where TestMain built assay and the plugins; pluginDir holds the
// plugins and their manifest.
var (
	root      string
	bin       string
	assay     string
	pluginDir string
)

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	_, file, _, _ := runtime.Caller(0)
	root = filepath.Dir(filepath.Dir(file))
	dir, err := os.MkdirTemp("", "assay-e2e-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	bin = dir
	assay = filepath.Join(dir, "assay")
	pluginDir = filepath.Join(dir, "plugins")
	if err := goBuild(assay, "./cmd/assay"); err != nil {
		return 0, err
	}
	// every built-in plugin is a main package cmd/assay-scorer-<id>
	mains, err := filepath.Glob(filepath.Join(root, "cmd", "assay-scorer-*"))
	if err != nil {
		return 0, err
	}
	var plugins []string
	for _, m := range mains {
		name := filepath.Base(m)
		out := filepath.Join(pluginDir, name)
		if err := goBuild(out, "./cmd/"+name); err != nil {
			return 0, err
		}
		plugins = append(plugins, out)
	}
	args := append([]string{"--plugin-dir", pluginDir, "plugins", "register"}, plugins...)
	if out, err := exec.Command(assay, args...).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("registering plugins: %v\n%s", err, out)
	}
	return m.Run(), nil
}

// goBuild builds pkg into out as `make build` does (TestBuiltLean).
func goBuild(out, pkg string) error {
	cmd := buildflags.Command("-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// registerPlugin registers the plugin binary bin in the plugin directory
// plugins and syncs the database db's scorer CHECK to the manifest.
func registerPlugin(t testing.TB, plugins, db, bin string) {
	t.Helper()
	for _, args := range [][]string{{"plugins", "register", bin}, {"scorers", "sync"}} {
		if r := runRaw(t, append([]string{"--plugin-dir", plugins, "--db", db}, args...)...); r.code != 0 {
			t.Fatalf("assay %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
}

// result is one finished assay invocation.
type result struct {
	code           int
	stdout, stderr string
	cpu            float64 // user + system seconds, children included (peakRSS only)
}

// run runs assay with the test's plugin dir and the given database.
func run(t testing.TB, db string, args ...string) result {
	t.Helper()
	return runRaw(t, append([]string{"--plugin-dir", pluginDir, "--db", db}, args...)...)
}

// runRaw runs assay with exactly args, from the repository root.
func runRaw(t testing.TB, args ...string) result {
	t.Helper()
	full := args
	cmd := exec.Command(assay, full...)
	cmd.Dir = root
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running assay %s: %v", strings.Join(args, " "), err)
	}
	return result{code: code, stdout: so.String(), stderr: se.String()}
}
