package pack

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/pkg/diag"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenCode is the code each golden pack must produce, when its name is not
// the code itself.
var goldenCode = map[string]string{
	"alias_bomb":      CodeAlias,
	"comments_only":   CodeEmpty,
	"control_char":    CodeEncoding,
	"indent":          CodeSyntax,
	"infinity":        CodeType,
	"many_problems":   CodeDupLabel,
	"merge_and_alias": CodeType,
	"multi_doc":       CodeSyntax,
	"not_a_mapping":   CodeType,
	"not_yaml":        CodeSyntax,
	"self_alias":      CodeSyntax,
	"tabs":            CodeSyntax,
	"wrong_shapes":    CodeType,
}

// TestGolden loads every bad pack under testdata/golden and compares the
// rendered diagnostics (file:line:col, message, source line and caret) with
// its .golden file. Run with -update to rewrite them.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden packs: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p, list := Parse(file, src, Options{Scorers: testCatalog()})
			if p != nil || !list.HasErrors() {
				t.Fatalf("Parse(%q) = %v, %v; want nil and errors", file, p, list)
			}
			code := goldenCode[name]
			if code == "" {
				code = "pack." + name
			}
			if !hasCode(list, code) {
				t.Errorf("Parse(%q) reported no %s:\n%s", file, code, list)
			}
			got := list.Render(map[string][]byte{file: src})
			checkGolden(t, strings.TrimSuffix(file, ".yaml")+".golden", got, fmt.Sprintf("Parse(%q)", file))
		})
	}
}

func hasCode(l diag.List, code string) bool {
	for _, d := range l {
		if d.Code == code {
			return true
		}
	}
	return false
}

// TestManyProblemsAtOnce checks one run reports every problem of a pack
// with several different ones, sorted by position.
func TestManyProblemsAtOnce(t *testing.T) {
	const file = "testdata/golden/many_problems.yaml"
	_, list := Load(file, Options{Scorers: testCatalog()})
	codes := map[string]bool{}
	for _, d := range list {
		codes[d.Code] = true
	}
	for _, want := range []string{CodeType, CodeDupLabel, CodePersona, CodeUnknownScore, CodeWeights, CodeUnknownKey, CodeRange} {
		if !codes[want] {
			t.Errorf("Load(%q) did not report %s; got:\n%s", file, want, list)
		}
	}
	if len(codes) < 4 {
		t.Errorf("Load(%q) reported %d different codes, want at least 4", file, len(codes))
	}
	for i := 1; i < len(list); i++ {
		if list[i].Pos.Less(list[i-1].Pos) {
			t.Errorf("Load(%q) diagnostics not sorted: %v before %v", file, list[i-1].Pos, list[i].Pos)
		}
	}
}

// TestGoldenTooLarge is the golden test for pack.too_large: the pack is a
// sparse 9 MiB file made on the fly, refused before it is read.
func TestGoldenTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "too_large.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(9 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, list := Load(path, Options{})
	const file = "testdata/golden/too_large.yaml"
	for i := range list {
		list[i].Pos.File = file
	}
	got := list.Render(map[string][]byte{file: []byte("\n")})
	checkGolden(t, "testdata/golden/too_large.golden", got, "Load(9 MiB file)")
}

// checkGolden compares the rendered diagnostics got, produced by call, with
// goldenFile; with -update it rewrites goldenFile instead.
func checkGolden(t *testing.T, goldenFile, got, call string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(goldenFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s diagnostics differ from %s (-want +got):\n%s", call, goldenFile, diff)
	}
}
