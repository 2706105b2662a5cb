package pack_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/kpi"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/pkg/diag"
)

// TestValidateSameAsLoad validates every pack of TestSplitSameAsWhole's
// corpus as `assay pack validate` does (the tasks checked as they are
// decoded, then dropped) and as `assay verify` loads it (Parse, the checks
// on the whole pack): the diagnostics, the verdict, the hash and the task
// count must be the same, and no task may be held.
func TestValidateSameAsLoad(t *testing.T) {
	t.Parallel()
	inputs := pack.SplitInputs(t)
	var failing int
	for _, in := range inputs {
		t.Run(in.Name, func(t *testing.T) {
			t.Parallel()
			for _, opts := range []pack.Options{
				{Scorers: pack.TestCatalog(), Checks: []pack.Check{kpi.NewChecker()}},
				{Checks: []pack.Check{kpi.NewChecker(), kpi.NewChecker(kpi.WithLimits(kpi.Limits{Estimate: 1}))}},
				{},
			} {
				checkValidateSame(t, in.Name, in.Src, opts)
			}
		})
		if strings.Contains(in.Name, "problems in many tasks") {
			failing++
		}
	}
	if failing < 2 {
		t.Fatalf("the corpus has %d packs with problems in many tasks, want 2", failing)
	}
}

// TestValidateOffHeapSameAsParse validates every pack of the corpus from a
// file read outside the Go heap (as Validate reads a large pack, then frees
// it): the diagnostics, the verdict, the hash and the task count must be
// Parse's, with the streamed checks and with one that needs the whole pack
// (which makes Validate read onto the heap).
func TestValidateOffHeapSameAsParse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, in := range pack.SplitInputs(t) {
		path := filepath.Join(dir, fmt.Sprintf("p%d.yaml", i))
		if err := os.WriteFile(path, in.Src, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, opts := range []pack.Options{
			{Scorers: pack.TestCatalog(), Checks: []pack.Check{kpi.NewChecker()}},
			{Checks: []pack.Check{wholePack{kpi.NewChecker()}}},
		} {
			p, want := pack.Parse(path, in.Src, opts)
			got, list := pack.ValidateOffHeap(path, opts)
			if diff := cmp.Diff(want, list); diff != "" {
				t.Errorf("%s: ValidateOffHeap's diagnostics differ from Parse's (-Parse +Validate):\n%s", in.Name, diff)
			}
			if (p == nil) != (got == nil) {
				t.Fatalf("%s: ValidateOffHeap valid = %v, Parse valid = %v (%v)", in.Name, got != nil, p != nil, want)
			}
			if p != nil && (got.SHA256 != p.SHA256 || got.Tasks != len(p.Tasks)) {
				t.Errorf("%s: ValidateOffHeap = %+v, want sha256 %s and %d tasks", in.Name, got, p.SHA256, len(p.Tasks))
			}
		}
	}
}

// wholePack is a Check that is not a TaskChecker.
type wholePack struct{ c pack.Check }

func (w wholePack) CheckPack(p *pack.Pack) diag.List {
	if len(p.Source) == 0 {
		return diag.List{diag.Errorf(diag.Pos{File: p.Path}, "test.source", "CheckPack got no source")}
	}
	return w.c.CheckPack(p)
}

func checkValidateSame(t *testing.T, name string, src []byte, opts pack.Options) {
	t.Helper()
	p, want := pack.Parse("p.yaml", src, opts)
	got, list, held := pack.ValidateSource("p.yaml", src, opts)
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("%s: Validate's diagnostics differ from Parse's (-Parse +Validate):\n%s", name, diff)
	}
	if render(want, src) != render(list, src) {
		t.Errorf("%s: Validate's rendered diagnostics differ from Parse's", name)
	}
	if (p == nil) != (got == nil) {
		t.Fatalf("%s: Validate valid = %v, Parse valid = %v (%v)", name, got != nil, p != nil, want)
	}
	if p != nil && (got.SHA256 != p.SHA256 || got.Tasks != len(p.Tasks)) {
		t.Errorf("%s: Validate = %+v, want sha256 %s and %d tasks", name, got, p.SHA256, len(p.Tasks))
	}
	streamed := true
	for _, chk := range opts.Checks {
		if _, ok := chk.(pack.TaskChecker); !ok {
			streamed = false
		}
	}
	if streamed && held != 0 {
		t.Errorf("%s: Validate held %d tasks, want none", name, held)
	}
}

func render(l diag.List, src []byte) string {
	return l.Render(map[string][]byte{"p.yaml": src})
}

// TestValidateManyCELProblems checks the streamed and loaded readings
// report the same capped list for a pack with more CEL problems than
// MaxDiagnostics, and the same verdict when a check is not a TaskChecker.
func TestValidateManyCELProblems(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("schema_version: hsm.company_eval_pack.v1\ncompany: {id: x}\npersonas: [cto]\ntasks:\n")
	for i := range 3 * pack.MaxDiagnostics {
		fmt.Fprintf(&b, "  - label: t%d\n    persona: cto\n    prompt: p\n    scorer: answer_keywords\n    cel:\n      - {name: c, expr: 'turn.nope%d'}\n", i, i%5)
	}
	b.WriteString("scoring: {process_weight: 0.5, kpi_weight: 0.5}\n")
	src := []byte(b.String())
	for _, opts := range []pack.Options{
		{Scorers: pack.TestCatalog(), Checks: []pack.Check{kpi.NewChecker()}},
		{Checks: []pack.Check{kpi.NewChecker(), wholeOnly{}}},
	} {
		checkValidateSame(t, "many CEL problems", src, opts)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	_, want := pack.Load(path, pack.Options{Checks: []pack.Check{kpi.NewChecker()}})
	s, got := pack.Validate(path, pack.Options{Checks: []pack.Check{kpi.NewChecker()}})
	if s != nil || len(got) != pack.MaxDiagnostics+1 {
		t.Errorf("Validate(%q) = %v, %d diagnostics, want nil and %d", path, s, len(got), pack.MaxDiagnostics+1)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Validate(%q) diagnostics differ from Load's (-Load +Validate):\n%s", path, diff)
	}
}

// wholeOnly is a Check that is not a TaskChecker: Validate keeps the tasks
// for it.
type wholeOnly struct{}

func (wholeOnly) CheckPack(p *pack.Pack) diag.List {
	if len(p.Tasks) > 1 {
		return diag.List{diag.Warnf(diag.Pos{File: p.Path, Line: 1, Col: 1}, "test.tasks", "%d tasks", len(p.Tasks))}
	}
	return nil
}

// FuzzValidateSameAsLoad checks Validate and Parse with the CEL checker
// agree on any input.
func FuzzValidateSameAsLoad(f *testing.F) {
	for _, in := range pack.SplitInputs(f) {
		if len(in.Src) < 2048 {
			f.Add(in.Src)
		}
	}
	catalog := pack.TestCatalog()
	f.Fuzz(func(t *testing.T, src []byte) {
		checkValidateSame(t, "input", src, pack.Options{Scorers: catalog, Checks: []pack.Check{kpi.NewChecker()}})
	})
}
