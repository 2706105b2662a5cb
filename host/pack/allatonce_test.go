package pack_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/host/kpi"
	"github.com/assay-eval/assay/host/pack"
)

// TestEveryPackProblemAtOnce (issue 12 item 7): a pack with YAML-level rule
// errors (an unknown key under scoring, a task's unknown key and persona)
// and CEL errors in several tasks reports all of them in one Parse, with the
// CEL checker plugged in as `assay pack validate` plugs it in. The packs
// under testdata/all_at_once are compared with their .golden files (run
// with -update to rewrite them).
func TestEveryPackProblemAtOnce(t *testing.T) {
	files, err := filepath.Glob("testdata/all_at_once/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no packs under testdata/all_at_once: %v", err)
	}
	wantCodes := map[string][]string{
		"rules_and_cel": {pack.CodeUnknownKey, pack.CodePersona, pack.CodeType, kpi.CodeCompile, kpi.CodeType},
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p, list := pack.Parse(file, src, pack.Options{Scorers: pack.TestCatalog(), Checks: []pack.Check{kpi.NewChecker()}})
			if p != nil {
				t.Fatalf("Parse(%q) = a pack, want nil", file)
			}
			var codes []string
			for _, d := range list {
				codes = append(codes, d.Code)
			}
			for _, want := range wantCodes[name] {
				if !slices.Contains(codes, want) {
					t.Errorf("Parse(%q) reported no %s; got %v", file, want, codes)
				}
			}
			got := list.Render(map[string][]byte{file: src})
			pack.CheckGolden(t, strings.TrimSuffix(file, ".yaml")+".golden", got, "Parse("+file+")")
		})
	}
}
