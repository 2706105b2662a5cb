package e2e

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMakeFuzzFindsEveryFuzzTarget: `make fuzz` runs the list `make
// fuzz-list` derives, and that list holds every Fuzz function of the tree,
// found here independently by parsing every _test.go file.
func TestMakeFuzzFindsEveryFuzzTarget(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make command")
	}
	cmd := exec.Command("make", "-s", "--no-print-directory", "fuzz-list")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make fuzz-list: %v", err)
	}
	got := strings.Fields(string(out))
	want := fuzzTargets(t, root)
	if len(want) == 0 {
		t.Fatal("found no Fuzz functions in the tree; the parser walk is broken")
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("make fuzz-list mismatch (-parsed +listed):\n%s", d)
	}
}

// fuzzTargets parses every _test.go file under dir (skipping what the go
// command skips) and returns its Fuzz functions as ./pkg/dir:FuzzName, sorted.
func fuzzTargets(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := "./" + filepath.ToSlash(rel)
		if rel == "." {
			pkg = "."
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") {
				out = append(out, pkg+":"+fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", dir, err)
	}
	slices.Sort(out)
	return out
}

// TestRepositoryExplainsItself: no tracked file cites the design documents
// that live outside the repository; the rules are in docs/ and comments point
// there.
func TestRepositoryExplainsItself(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git command")
	}
	// Each pattern is split so that this file does not match itself.
	patterns := []string{"DESIGN" + ".md", "shared/" + "contracts", "contracts/" + "verdict", "contracts/" + "taskeval", "seed " + "00", "seed-" + "00"}
	args := []string{"grep", "-n", "-I", "-F"}
	for _, p := range patterns {
		args = append(args, "-e", p)
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case err == nil:
		t.Errorf("files cite documents outside the repository; point them at docs/ instead:\n%s", out)
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		// git grep found nothing
	default:
		t.Fatalf("git grep: %v", err)
	}
}

// maxFuzzSeed is the largest checked-in fuzz seed: the fuzzer minimizes each
// new input it derives from a seed, and large seeds once made FuzzLoadPack
// spend its whole budget minimizing (34 executions a minute).
const maxFuzzSeed = 2 << 10

// TestFuzzSeedsAreSmall (issue 14 item 9): every file of every
// testdata/fuzz corpus is at most maxFuzzSeed bytes, and make fuzz bounds
// minimization (-fuzzminimizetime), so every target spends its time fuzzing.
func TestFuzzSeedsAreSmall(t *testing.T) {
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.Contains(filepath.ToSlash(path), "/testdata/fuzz/") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > maxFuzzSeed {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("fuzz seed %s is %d bytes, want at most %d", rel, info.Size(), maxFuzzSeed)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "-fuzzminimizetime $(FUZZMINIMIZETIME)") {
		t.Error("make fuzz does not pass -fuzzminimizetime")
	}
}
