package pack

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/pkg/diag"
)

// scalarPosOf parses a one-key YAML document "x: ..." and maps its value.
func scalarPosOf(t *testing.T, src string) (ScalarPos, string) {
	t.Helper()
	c := &collector{}
	doc, ok := parseYAML("s.yaml", []byte(src), c)
	if !ok {
		t.Fatalf("parsing %q: %v", src, c.list)
	}
	root := newBuilder("s.yaml", c).build(doc)
	_, v := root.get("x")
	if v == nil || v.kind != kString {
		t.Fatalf("%q has no string x", src)
	}
	d := &decoder{file: "s.yaml", src: []byte(src), c: c}
	return d.scalarPos(v), v.str
}

// runeAt returns the rune of src at a 1-based line:col.
func runeAt(src string, p diag.Pos) (rune, bool) {
	lines := strings.Split(src, "\n")
	if p.Line < 1 || p.Line > len(lines) {
		return 0, false
	}
	rs := []rune(lines[p.Line-1])
	if p.Col < 1 || p.Col > len(rs) {
		return 0, false
	}
	return rs[p.Col-1], true
}

func TestScalarPosAt(t *testing.T) {
	t.Parallel()
	type at struct {
		offset int
		want   string // "line:col"
	}
	tests := []struct {
		name  string
		src   string
		style ScalarStyle
		ats   []at
	}{
		{"plain", "x: size(turn.tool_calls) <= 8\n", Plain,
			[]at{{0, "1:4"}, {5, "1:9"}, {25, "1:29"}}},
		{"plain with comment", "x: a || b  # why\n", Plain, []at{{5, "1:9"}}},
		{"plain multi-line", "x: turn.finalized &&\n  size(turn.tools) > 0\n", Plain,
			[]at{{0, "1:4"}, {17, "1:21"}, {18, "2:3"}, {22, "2:7"}}},
		{"plain with tag and anchor", "x: &e !!str a + b\n", Plain, []at{{0, "1:13"}, {4, "1:17"}}},
		{"single-quoted", "x: '!turn.error'\n", SingleQuoted, []at{{0, "1:5"}, {1, "1:6"}}},
		{"single-quoted escape", "x: 'it''s ok'\n", SingleQuoted, []at{{2, "1:7"}, {3, "1:9"}, {6, "1:12"}}},
		{"single-quoted multi-line", "x: 'a &&\n    b'\n", SingleQuoted, []at{{0, "1:5"}, {5, "2:5"}}},
		{"double-quoted", `x: "turn.answer.contains(\"ok\")"` + "\n", DoubleQuoted,
			[]at{{0, "1:5"}, {20, "1:25"}, {21, "1:26"}, {22, "1:28"}, {24, "1:30"}, {25, "1:32"}}},
		{"double-quoted unicode escape", `x: "\u00e9 + bad"` + "\n", DoubleQuoted, []at{{0, "1:5"}, {1, "1:11"}, {3, "1:13"}}},
		{"double-quoted line continuation", "x: \"a + \\\n   b\"\n", DoubleQuoted, []at{{0, "1:5"}, {4, "2:4"}}},
		{"literal", "x: |\n  size(turn.tool_calls)\n    <= 8\n", Literal,
			[]at{{0, "2:3"}, {5, "2:8"}, {21, "2:24"}, {22, "3:3"}, {24, "3:5"}}},
		{"literal keep", "x: |+\n  a\n\n  b\n\n", Literal, []at{{0, "2:3"}, {3, "4:3"}}},
		{"literal explicit indent", "x: |2\n    a\n  b\n", Literal, []at{{0, "2:3"}, {2, "2:5"}, {4, "3:3"}}},
		{"folded", "x: >-\n  turn.finalized &&\n  turn.answer != \"\"\n", Folded,
			[]at{{0, "2:3"}, {17, "2:20"}, {18, "3:3"}, {30, "3:15"}}},
		{"folded with blank line", "x: >\n  a\n\n  b\n", Folded, []at{{0, "2:3"}, {2, "4:3"}}},
		{"folded in a list item", "x: >\n    one two\n    three\n", Folded, []at{{4, "2:9"}, {8, "3:5"}}},
		{"unicode", "x: size(\"é\") + 'ü'\n", Plain, []at{{0, "1:4"}, {6, "1:10"}, {13, "1:17"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp, value := scalarPosOf(t, tc.src)
			if sp.Style != tc.style {
				t.Errorf("style = %v, want %v", sp.Style, tc.style)
			}
			for _, a := range tc.ats {
				got := sp.At(a.offset)
				if s := strings.TrimPrefix(got.String(), "s.yaml:"); s != a.want {
					t.Errorf("At(%d) in %q (value %q) = %s, want %s", a.offset, tc.src, value, s, a.want)
				}
			}
			// Every rune of the value that the source holds literally maps to
			// that rune.
			for i, r := range []rune(value) {
				got, ok := runeAt(tc.src, sp.At(i))
				if r == ' ' || r == '\n' || (ok && got == r) {
					continue
				}
				if ok && (got == '\\' || got == '\'') && sp.Style != Plain {
					continue // an escape maps to its backslash (or doubled quote)
				}
				t.Errorf("At(%d) in %q = %v holding %q, want %q", i, tc.src, sp.At(i), got, r)
			}
		})
	}
}

func TestScalarPosAtEdges(t *testing.T) {
	t.Parallel()
	sp, _ := scalarPosOf(t, "x: abc\n")
	tests := []struct {
		offset int
		want   diag.Pos
	}{
		{-5, diag.Pos{File: "s.yaml", Line: 1, Col: 4}},
		{3, diag.Pos{File: "s.yaml", Line: 1, Col: 7}}, // just past the end
		{10, diag.Pos{File: "s.yaml", Line: 1, Col: 14}},
	}
	for _, tc := range tests {
		if got := sp.At(tc.offset); got != tc.want {
			t.Errorf("At(%d) = %v, want %v", tc.offset, got, tc.want)
		}
	}
	// A hand-built ScalarPos without runs still maps, past the opening quote.
	hand := ScalarPos{Pos: diag.Pos{File: "h.yaml", Line: 3, Col: 10}, Style: DoubleQuoted}
	if got, want := hand.At(2), (diag.Pos{File: "h.yaml", Line: 3, Col: 13}); got != want {
		t.Errorf("hand-built At(2) = %v, want %v", got, want)
	}
	if diff := cmp.Diff(ScalarPos{}.At(0), diag.Pos{}); diff != "" {
		t.Errorf("zero ScalarPos At(0) (-want +got):\n%s", diff)
	}
}

// TestCELPositions checks the loader fills ExprPos and MessagePos.
func TestCELPositions(t *testing.T) {
	t.Parallel()
	src := "company: {id: a}\npersonas: [p]\nscoring: {process_weight: 0.5, kpi_weight: 0.5}\ntasks:\n" +
		"  - label: t\n    persona: p\n    prompt: x\n    scorer: answer_keywords\n    cel:\n" +
		"      - name: c\n        expr: >-\n          turn.finalized &&\n          turn.answer.size() > 3\n" +
		"        message_expr: '\"short: \" + turn.answer'\n"
	p, list := Parse("cel.yaml", []byte(src), Options{})
	if p == nil {
		t.Fatalf("Parse = %v", list)
	}
	c := p.Tasks[0].CEL[0]
	if c.Expr != "turn.finalized && turn.answer.size() > 3" || c.Weight != 1 || c.Pos != (diag.Pos{File: "cel.yaml", Line: 10, Col: 7}) {
		t.Errorf("CEL check = %+v", c)
	}
	if got, want := c.ExprPos.At(strings.Index(c.Expr, "size")), (diag.Pos{File: "cel.yaml", Line: 13, Col: 23}); got != want {
		t.Errorf("ExprPos.At(size) = %v, want %v", got, want)
	}
	if got, want := c.MessagePos.At(strings.Index(c.MessageExpr, "turn")), (diag.Pos{File: "cel.yaml", Line: 14, Col: 36}); got != want {
		t.Errorf("MessagePos.At(turn) = %v, want %v", got, want)
	}
}

// TestScalarPosFastSame checks that scalarPos's shortcut for one-line plain
// scalars, wherever it applies, gives what the full mapping gives, on every
// string of every pack of TestSplitSameAsWhole's corpus and some edge cases,
// and that it applies to the generated pack's CEL expressions.
func TestScalarPosFastSame(t *testing.T) {
	t.Parallel()
	inputs := splitInputs(t)
	for _, src := range []string{
		"x: a b\n", "x: !!str a\n", "x: &a b\n", "x: a # c\n", "x: a\n  b\n", "x: é a\n", "é: a\n", "x: a é\n",
		"x:\ta\n", "x: a\r\n", "- x: a\n", "x: [a, b]\n", "x: {y: a}\n", "x: a \n", "x: 'a'\n", "x: >\n  a\n",
	} {
		inputs = append(inputs, splitInput{name: src, src: []byte(src)})
	}
	applied := 0
	for _, in := range inputs {
		c := &collector{}
		doc, ok := parseYAML("p.yaml", in.src, c)
		if !ok {
			continue
		}
		b := newBuilder("p.yaml", c)
		root := b.build(doc)
		if b.stopped {
			continue
		}
		d := &decoder{file: "p.yaml", src: in.src, c: c}
		var walk func(n *node)
		walk = func(n *node) {
			if n == nil {
				return
			}
			if n.kind == kString {
				if got, ok := d.oneLinePlain(n); ok {
					applied++
					if want := d.scalarPosFull(n); !cmp.Equal(want, got) {
						t.Errorf("%s: line %d: oneLinePlain = %+v, scalarPosFull = %+v", in.name, n.pos().Line, got, want)
					}
				}
			}
			for _, it := range n.items {
				walk(it)
			}
		}
		walk(root)
	}
	if applied == 0 {
		t.Fatal("oneLinePlain applied to no scalar of the corpus")
	}
	d := &decoder{file: "g.yaml", src: []byte("x: turn.finalized && !turn.error\n")}
	doc, _ := parseYAML("g.yaml", d.src, &collector{})
	_, v := newBuilder("g.yaml", &collector{}).build(doc).get("x")
	if _, ok := d.oneLinePlain(v); !ok {
		t.Error("oneLinePlain does not apply to a plain one-line CEL expression")
	}
}
