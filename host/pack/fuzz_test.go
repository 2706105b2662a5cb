package pack

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzLoadPack feeds arbitrary bytes to the loader: it must never panic or
// hang, every diagnostic must be positioned in the file, and a returned pack
// must be free of errors. The seed corpus is testdata/fuzz/FuzzLoadPack
// only: every seed is under 1 KB, because the fuzzer minimizes each new
// interesting input it derives from a seed, and the 2-6 KB bundled packs
// (checked by TestBundledPacksValidate) made it spend its whole budget minimizing.
func FuzzLoadPack(f *testing.F) {
	catalog := testCatalog()
	f.Fuzz(func(t *testing.T, src []byte) {
		p, list := Parse("fuzz.yaml", src, Options{Scorers: catalog})
		if len(list) > MaxDiagnostics+1 {
			t.Fatalf("%d diagnostics, want at most %d", len(list), MaxDiagnostics+1)
		}
		for _, d := range list {
			if d.Pos.File != "fuzz.yaml" || (d.Code != "diag.truncated" && d.Pos.Line < 1) {
				t.Errorf("diagnostic without a position: %v", d)
			}
			if !strings.HasPrefix(d.Code, "pack.") && d.Code != "diag.truncated" {
				t.Errorf("diagnostic with code %q", d.Code)
			}
			if !utf8.ValidString(d.Message) && utf8.Valid(src) {
				t.Errorf("diagnostic message is not UTF-8: %q", d.Message)
			}
		}
		_ = list.Render(map[string][]byte{"fuzz.yaml": src})
		if p == nil {
			if !list.HasErrors() {
				t.Fatalf("no pack and no error: %v", list)
			}
			return
		}
		if list.HasErrors() {
			t.Fatalf("a pack with errors: %v", list)
		}
		labels := map[string]bool{}
		for _, task := range p.Tasks {
			if task.Weight <= 0 || labels[task.Label] || task.Pos().Line < 1 {
				t.Fatalf("task %+v accepted", task)
			}
			labels[task.Label] = true
			for _, c := range task.CEL {
				for i := 0; i <= utf8.RuneCountInString(c.Expr); i++ {
					if pos := c.ExprPos.At(i); pos.Line < 1 || pos.Col < 1 {
						t.Fatalf("CEL %q: At(%d) = %v", c.Expr, i, pos)
					}
				}
			}
		}
	})
}
