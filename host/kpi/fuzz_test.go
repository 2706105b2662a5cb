package kpi

import (
	"testing"
	"unicode/utf8"

	"github.com/assay-eval/assay/pkg/diag"
)

// fuzzCompileSeeds seed FuzzCompile (with testdata/fuzz/FuzzCompile); the
// cost property (TestEstimateBoundsActualCost) runs over them too.
var fuzzCompileSeeds = []string{
	"size(turn.tool_calls) <= 8",
	"turn.answer.contains('policy') && turn.finalized",
	"keywords_ratio(turn.answer, ['a', 'b'])",
	"in_order(turn.tools, ['a', 'b'])",
	"turn.events.all(e, turn.events.exists(f, f.line > e.line))",
	"turn.answr == 'x'",
	"1 +",
	"",
}

// FuzzCompile feeds arbitrary expressions through the compile path: it must
// never panic, every diagnostic must carry a known code and a position inside
// the expression, and a compiled expression must have a type and an estimate
// within the limit.
func FuzzCompile(f *testing.F) {
	for _, s := range fuzzCompileSeeds {
		f.Add(s)
	}
	c := NewChecker()
	f.Fuzz(func(t *testing.T, src string) {
		e, ds := c.Compile(src, TextPos("expr", src))
		if e == nil && len(ds) == 0 {
			t.Fatalf("Compile(%q) = nil, no diagnostics", src)
		}
		if e != nil {
			if len(ds) != 0 {
				t.Fatalf("Compile(%q) = %v and diagnostics %v", src, e, ds)
			}
			if e.Type == nil || e.Estimate.Max > c.Limits().Estimate {
				t.Fatalf("Compile(%q) = type %v, estimate %v", src, e.Type, e.Estimate)
			}
			return
		}
		end := TextPos("expr", src)(utf8.RuneCountInString(src))
		for _, d := range ds {
			switch d.Code {
			case CodeCompile, CodeType, CodeCost:
			default:
				t.Fatalf("Compile(%q): diagnostic %v has an unknown code", src, d)
			}
			if d.Pos.Line < 1 || d.Pos.Col < 1 || end.Less(d.Pos) && d.Pos != (diag.Pos{File: "expr", Line: end.Line, Col: end.Col}) {
				t.Fatalf("Compile(%q): diagnostic %v is outside the expression (ends at %v)", src, d, end)
			}
		}
	})
}
