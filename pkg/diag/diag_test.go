package diag

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRender(t *testing.T) {
	long := strings.Repeat("a", 100) + "é" + strings.Repeat("b", 9900) // one minified line
	src := map[string][]byte{"p.yaml": []byte("tasks:\n\t- label: x\n  naïve: 1\n" + long + "\n")}
	tests := []struct {
		name string
		d    Diagnostic
		want string
	}{
		{"caret under column", Errorf(Pos{File: "p.yaml", Line: 1, Col: 3}, "pack.x", "bad %s", "key"),
			"p.yaml:1:3: pack.x: bad key\n    tasks:\n      ^\n"},
		{"tabs kept so the caret lines up", Errorf(Pos{File: "p.yaml", Line: 2, Col: 4}, "pack.tab", "tab"),
			"p.yaml:2:4: pack.tab: tab\n    \t- label: x\n    \t  ^\n"},
		{"columns count runes", Errorf(Pos{File: "p.yaml", Line: 3, Col: 8}, "pack.k", "k"),
			"p.yaml:3:8: pack.k: k\n      naïve: 1\n           ^\n"},
		{"warning", Warnf(Pos{File: "p.yaml", Line: 1}, "trace.raw", "w"),
			"p.yaml:1: warning: trace.raw: w\n    tasks:\n"},
		{"line past the end", Errorf(Pos{File: "p.yaml", Line: 9, Col: 1}, "pack.x", "eof"),
			"p.yaml:9:1: pack.x: eof\n"},
		{"no position", Errorf(Pos{}, "pack.empty", "empty"), "pack.empty: empty\n"},
		{"long line: window at the start", Errorf(Pos{File: "p.yaml", Line: 4, Col: 3}, "pack.x", "x"),
			"p.yaml:4:3: pack.x: x\n    " + long[:MaxExcerpt+1] + "...\n      ^\n"},
		{"long line: window around the column", Errorf(Pos{File: "p.yaml", Line: 4, Col: 5000}, "pack.x", "x"),
			"p.yaml:4:5000: pack.x: x\n    ..." + strings.Repeat("b", MaxExcerpt) + "...\n    " + strings.Repeat(" ", 3+MaxExcerpt/2) + "^\n"},
		{"long line: window at the end", Errorf(Pos{File: "p.yaml", Line: 4, Col: 10001}, "pack.x", "x"),
			"p.yaml:4:10001: pack.x: x\n    ..." + strings.Repeat("b", MaxExcerpt/2+1) + "\n    " + strings.Repeat(" ", 3+MaxExcerpt/2) + "^\n"},
		{"long line: column past the end", Errorf(Pos{File: "p.yaml", Line: 4, Col: 20000}, "pack.x", "x"),
			"p.yaml:4:20000: pack.x: x\n    ..." + strings.Repeat("b", MaxExcerpt/2) + "\n    " + strings.Repeat(" ", 3+MaxExcerpt/2) + "^\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (List{tt.d}).Render(src); got != tt.want {
				t.Errorf("Render(%v) =\n%q\nwant\n%q", tt.d, got, tt.want)
			}
		})
	}
}

func TestSortCapAndErrors(t *testing.T) {
	l := List{
		Errorf(Pos{File: "b", Line: 1, Col: 1}, "c", "m"),
		Warnf(Pos{File: "a", Line: 2, Col: 1}, "w", "m"),
		Errorf(Pos{File: "a", Line: 1, Col: 5}, "c", "m"),
		Errorf(Pos{File: "a", Line: 1, Col: 2}, "c", "m"),
	}
	l.Sort()
	var got []string
	for _, d := range l {
		got = append(got, d.Pos.String())
	}
	if diff := cmp.Diff([]string{"a:1:2", "a:1:5", "a:2:1", "b:1:1"}, got); diff != "" {
		t.Errorf("Sort order (-want +got):\n%s", diff)
	}
	capped := l.Cap(2)
	if len(capped) != 3 || capped[2].Code != "diag.truncated" || capped[2].Message != "2 more problems not shown" {
		t.Errorf("Cap(2) = %v", capped)
	}
	if !l.HasErrors() || l.Err() == nil || len(l.Errors()) != 3 {
		t.Errorf("HasErrors/Err/Errors wrong for %v", l)
	}
	warn := List{Warnf(Pos{}, "w", "m")}
	if warn.HasErrors() || warn.Err() != nil {
		t.Errorf("a list of warnings is not an error")
	}
}

func TestListJSON(t *testing.T) {
	b, err := json.Marshal(List(nil))
	if err != nil || string(b) != "[]" {
		t.Errorf("json of nil list = %s, %v; want []", b, err)
	}
	b, _ = json.Marshal(List{Errorf(Pos{File: "f", Line: 1, Col: 2}, "c", "m")})
	want := `[{"pos":{"file":"f","line":1,"col":2},"severity":"error","code":"c","message":"m"}]`
	if string(b) != want {
		t.Errorf("json = %s, want %s", b, want)
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"answer", "answer", 0}, {"answr", "answer", 1}, {"tool_call", "tool_calls", 1},
		{"kitten", "sitting", 3}, {"naïve", "naive", 1}, {"", "abc", 3},
	}
	for _, tt := range tests {
		if got := EditDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	long := string(make([]byte, 100))
	if EditDistance(long, "a") <= 64 {
		t.Errorf("EditDistance of a 100-rune word is close to %q", "a")
	}
}

func TestCapSeverity(t *testing.T) {
	w := func(line int) Diagnostic { return Warnf(Pos{File: "f", Line: line}, "w", "m") }
	e := func(line int) Diagnostic { return Errorf(Pos{File: "f", Line: line}, "e", "m") }
	tests := []struct {
		name       string
		l          List
		wantErrors bool
	}{
		{"warnings only stay usable", List{w(1), w(2), w(3)}, false},
		{"an error among the kept ones", List{e(1), w(2), w(3)}, true},
		{"an error among the dropped ones", List{w(1), w(2), e(3)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.l.Cap(1)
			if len(got) != 2 || got[1].Code != "diag.truncated" {
				t.Fatalf("Cap(1) = %v, want one kept and a truncation note", got)
			}
			if diff := cmp.Diff(tt.wantErrors, got.HasErrors()); diff != "" {
				t.Errorf("Cap(1).HasErrors() of %v (-want +got):\n%s", tt.l, diff)
			}
		})
	}
}

func TestOffsetPos(t *testing.T) {
	src := []byte("ab\nnaïve x\n")
	tests := []struct {
		off  int
		want Pos
	}{
		{0, Pos{File: "f", Line: 1, Col: 1}},
		{2, Pos{File: "f", Line: 1, Col: 3}},
		{3, Pos{File: "f", Line: 2, Col: 1}},
		{10, Pos{File: "f", Line: 2, Col: 7}}, // after "naïve " (ï is two bytes)
		{-5, Pos{File: "f", Line: 1, Col: 1}},
		{99, Pos{File: "f", Line: 3, Col: 1}},
	}
	for _, tt := range tests {
		if got := OffsetPos("f", src, tt.off); got != tt.want {
			t.Errorf("OffsetPos(%d) = %v, want %v", tt.off, got, tt.want)
		}
	}
}

// TestRenderEscapesControlCharacters covers issue 14 item 8: a rendered
// diagnostic (message and source excerpt) carries no raw control byte, and
// the caret stays under the column it points at.
func TestRenderEscapesControlCharacters(t *testing.T) {
	src := map[string][]byte{"s.json": []byte("{\"t\": \"\x1b]0;pwned\x07\x1b[2J\", x}\n")}
	l := List{Errorf(Pos{File: "s.json", Line: 1, Col: 25}, "state.syntax", "bad value \x1b[31m\x00 near \u009b")}
	got := l.Render(src)
	want := "s.json:1:25: state.syntax: bad value \\x1b[31m\\x00 near \\u009b\n" +
		"    {\"t\": \"\\x1b]0;pwned\\x07\\x1b[2J\", x}\n" +
		"                                     ^\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Render mismatch (-want +got):\n%s", diff)
	}
	for _, c := range got {
		if c < 0x20 && c != '\n' || c == 0x7f || c >= 0x80 && c <= 0x9f {
			t.Fatalf("Render output holds control character %U: %q", c, got)
		}
	}
}

// posString is Pos.String as it was written with fmt: the format every
// diagnostic, results.json and the database show.
func posString(p Pos) string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%d", p.Line)
		if p.Col > 0 {
			fmt.Fprintf(&b, ":%d", p.Col)
		}
	}
	return b.String()
}

func TestPosString(t *testing.T) {
	long := strings.Repeat("dir/", 40) + "turns.jsonl"
	for _, p := range []Pos{
		{}, {File: "a.yaml"}, {File: "a.yaml", Line: 3}, {File: "a.yaml", Line: 3, Col: 7},
		{File: "a.yaml", Col: 7}, {Line: 12}, {Line: 12, Col: 1}, {File: "é.json", Line: -1, Col: 4},
		{File: "x", Line: 5, Col: -2}, {File: long, Line: math.MaxInt, Col: math.MaxInt},
		{File: "x", Line: 1000000, Col: 99},
	} {
		if got, want := p.String(), posString(p); got != want {
			t.Errorf("%#v.String() = %q, want %q", p, got, want)
		}
	}
	p := Pos{File: long, Line: 123456, Col: 78}
	if n := testing.AllocsPerRun(100, func() { _ = p.String() }); n > 1 {
		t.Errorf("Pos.String allocates %v times, want 1", n)
	}
}
