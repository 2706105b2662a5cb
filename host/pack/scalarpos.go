package pack

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/assay-eval/assay/pkg/diag"
)

// At maps a rune offset inside the scalar's value to its position in the
// file. Offsets past the end map past the last character; line breaks that
// folding made into spaces map to the end of their line. Escapes in quoted
// scalars map to their backslash.
func (s ScalarPos) At(offset int) diag.Pos {
	offset = max(offset, 0)
	if len(s.Runs) == 0 {
		p := s.Pos
		if s.Style == SingleQuoted || s.Style == DoubleQuoted {
			p.Col++
		}
		p.Col += offset
		return p
	}
	i := sort.Search(len(s.Runs), func(i int) bool { return s.Runs[i].Offset > offset }) - 1
	if i < 0 {
		i = 0
	}
	r := s.Runs[i]
	p := r.Pos
	p.Col += max(offset-r.Offset, 0)
	return p
}

// contribution is one rune of a scalar's value and the source column it
// comes from.
type contribution struct {
	r   rune
	col int
}

// scalarPos maps a string scalar back to the source it was read from.
func (d *decoder) scalarPos(n *node) ScalarPos {
	if sp, ok := d.oneLinePlain(n); ok {
		return sp
	}
	return d.scalarPosFull(n)
}

// oneLinePlain is scalarPos for the usual CEL expression: a plain scalar
// without properties that is the rest of its line, after an ASCII prefix
// (so columns are bytes). Its position is its start and nothing more, as
// scalarPosFull finds (TestScalarPosFastSame).
func (d *decoder) oneLinePlain(n *node) (ScalarPos, bool) {
	if !n.yscal || ScalarStyle(n.style) != Plain {
		return ScalarPos{}, false
	}
	pos := n.pos()
	line, ok := d.lineBytes(pos.Line)
	c := pos.Col - 1
	if !ok || c < 0 || c >= len(line) || c > d.asciiPrefix(pos.Line, line) || line[c] == '!' || line[c] == '&' ||
		string(line[c:]) != n.value() {
		return ScalarPos{}, false
	}
	return ScalarPos{Pos: pos, Style: Plain}, true
}

// scalarPosFull is scalarPos for any scalar.
func (d *decoder) scalarPosFull(n *node) ScalarPos {
	pos := n.pos()
	sp := ScalarPos{Pos: pos, Style: ScalarStyle(n.style)}
	if !n.yscal {
		return sp
	}
	runes, ok := d.lineRunes(pos.Line) // shared and cached: read only
	if !ok {
		return sp
	}
	c := pos.Col - 1 // 0-based rune index of the token
	// Skip node properties (a tag or an anchor) written before the value.
	for c < len(runes) && (runes[c] == '!' || runes[c] == '&') {
		for c < len(runes) && runes[c] != ' ' && runes[c] != '\t' {
			c++
		}
		for c < len(runes) && (runes[c] == ' ' || runes[c] == '\t') {
			c++
		}
	}
	if c >= len(runes) {
		return sp
	}
	sp.Pos.Col = c + 1
	value := n.value()
	var lines [][]contribution
	switch sp.Style {
	case Literal, Folded:
		lines = d.blockLines(pos.Line, runes, c)
	case SingleQuoted, DoubleQuoted:
		lines = d.quotedLines(pos.Line, runes, c, sp.Style == DoubleQuoted, utf8.RuneCountInString(value))
	default:
		lines = d.plainLines(pos.Line, runes, c, utf8.RuneCountInString(value))
	}
	sp.Runs, sp.Lines = align([]rune(value), lines, pos.File)
	// Lines are for block and multi-line scalars; one run that starts where
	// At would start without runs says no more than no runs (a pack's many
	// one-line expressions are kept small).
	if len(sp.Lines) == 1 && sp.Style != Literal && sp.Style != Folded {
		sp.Lines = nil
	}
	if len(sp.Runs) == 1 && sp.Runs[0].Offset == 0 && sp.Runs[0].Pos == (ScalarPos{Pos: sp.Pos, Style: sp.Style}).At(0) {
		sp.Runs = nil
	}
	return sp
}

func styleOf(y *yaml.Node) ScalarStyle {
	switch {
	case y.Style&yaml.LiteralStyle != 0:
		return Literal
	case y.Style&yaml.FoldedStyle != 0:
		return Folded
	case y.Style&yaml.SingleQuotedStyle != 0:
		return SingleQuoted
	case y.Style&yaml.DoubleQuotedStyle != 0:
		return DoubleQuoted
	}
	return Plain
}

// plainLines: the first line from the token on, then each following line
// without its indentation, as many lines as the value could span.
func (d *decoder) plainLines(line int, first []rune, c, valueLen int) [][]contribution {
	// Enough lines are read when they hold as many runes as the value:
	// every rune of a plain scalar but the folded line breaks is written.
	out := [][]contribution{withLine(line, contribute(first, c, len(first)))}
	have := len(first) - c
	for l := line + 1; have < valueLen; l++ {
		text, ok := d.line(l)
		if !ok {
			break
		}
		rs := []rune(text)
		in := indentOf(rs)
		out = append(out, withLine(l, contribute(rs, in, len(rs))))
		have += max(len(rs)-in, 1)
	}
	return out
}

// withLine tags the first contribution's column with the line by storing the
// line in a leading sentinel; see align.
func withLine(line int, cs []contribution) []contribution {
	return append([]contribution{{r: -1, col: line}}, cs...)
}

func contribute(rs []rune, from, to int) []contribution {
	out := make([]contribution, 0, max(to-from, 0))
	for i := from; i < to; i++ {
		out = append(out, contribution{rs[i], i + 1})
	}
	return out
}

func indentOf(rs []rune) int {
	i := 0
	for i < len(rs) && (rs[i] == ' ' || rs[i] == '\t') {
		i++
	}
	return i
}

// quotedLines unescapes a quoted scalar line by line, stopping at the
// closing quote.
func (d *decoder) quotedLines(line int, first []rune, c int, double bool, valueLen int) [][]contribution {
	quote := '\''
	if double {
		quote = '"'
	}
	var out [][]contribution
	rs, i, l := first, c+1, line
	for {
		var cs []contribution
		closed := false
		for i < len(rs) && !closed {
			r := rs[i]
			switch {
			case r == quote && !double && i+1 < len(rs) && rs[i+1] == '\'':
				cs = append(cs, contribution{'\'', i + 1})
				i += 2
			case r == quote:
				closed = true
			case r == '\\' && double:
				if i+1 >= len(rs) {
					i++ // an escaped line break
					continue
				}
				er, width := unescape(rs[i+1:])
				cs = append(cs, contribution{er, i + 1})
				i += 1 + width
			default:
				cs = append(cs, contribution{r, i + 1})
				i++
			}
		}
		out = append(out, withLine(l, cs))
		if closed || l > line+valueLen {
			return out
		}
		l++
		text, ok := d.line(l)
		if !ok {
			return out
		}
		rs = []rune(text)
		i = indentOf(rs)
	}
}

// unescape decodes the escape after a backslash: the rune and how many
// source runes it takes.
func unescape(rs []rune) (rune, int) {
	hex := func(n int) (rune, int) {
		if len(rs) < 1+n {
			return rs[0], 1
		}
		v, err := strconv.ParseUint(string(rs[1:1+n]), 16, 32)
		if err != nil {
			return rs[0], 1
		}
		return rune(v), 1 + n
	}
	switch rs[0] {
	case '0':
		return 0, 1
	case 'a':
		return '\a', 1
	case 'b':
		return '\b', 1
	case 't', '\t':
		return '\t', 1
	case 'n':
		return '\n', 1
	case 'v':
		return '\v', 1
	case 'f':
		return '\f', 1
	case 'r':
		return '\r', 1
	case 'e':
		return 0x1b, 1
	case 'N':
		return 0x85, 1
	case '_':
		return 0xa0, 1
	case 'L':
		return 0x2028, 1
	case 'P':
		return 0x2029, 1
	case 'x':
		return hex(2)
	case 'u':
		return hex(4)
	case 'U':
		return hex(8)
	}
	return rs[0], 1 // \" \\ \/ \space and anything else: the character itself
}

// blockLines returns the content lines of a literal or folded block scalar
// whose indicator is at first[c].
func (d *decoder) blockLines(line int, first []rune, c int) [][]contribution {
	indent := 0
	header := string(first[c+1:])
	if i := strings.IndexAny(header, "123456789"); i >= 0 && i < 3 {
		parent := indentOf(first)
		for j := parent; j+1 < len(first) && first[j] == '-' && first[j+1] == ' '; {
			j += 2
			for j < len(first) && first[j] == ' ' {
				j++
			}
			parent = j
		}
		indent = parent + int(header[i]-'0')
	}
	var out [][]contribution
	for l := line + 1; ; l++ {
		text, ok := d.line(l)
		if !ok {
			break
		}
		rs := []rune(text)
		in := 0
		for in < len(rs) && rs[in] == ' ' {
			in++
		}
		if in == len(rs) || strings.TrimSpace(text) == "" {
			continue // an empty line: only line breaks in the value
		}
		if indent == 0 {
			indent = in
		}
		if in < indent {
			break
		}
		out = append(out, withLine(l, contribute(rs, indent, len(rs))))
	}
	return out
}

// align walks the value and the source contributions together. Runes the
// source lines hold map to their columns; separators that folding or
// escaping produced (spaces, line breaks) are skipped. It stops at the first
// mismatch, leaving the rest to At's extrapolation.
func align(value []rune, lines [][]contribution, file string) ([]ScalarRun, []diag.Pos) {
	var runs []ScalarRun
	var starts []diag.Pos
	o := 0
	for _, lc := range lines {
		if o >= len(value) {
			break
		}
		line, cs := lc[0].col, lc[1:]
		if len(cs) == 0 {
			continue
		}
		for o < len(value) && value[o] != cs[0].r && (value[o] == ' ' || value[o] == '\n' || value[o] == '\t') {
			o++
		}
		if o >= len(value) || value[o] != cs[0].r {
			break
		}
		starts = append(starts, diag.Pos{File: file, Line: line, Col: cs[0].col})
		for k := 0; k < len(cs) && o < len(value) && value[o] == cs[k].r; k++ {
			if k == 0 || cs[k].col != cs[k-1].col+1 {
				runs = append(runs, ScalarRun{Offset: o, Pos: diag.Pos{File: file, Line: line, Col: cs[k].col}})
			}
			o++
		}
	}
	return runs, starts
}
