package diag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/assay-eval/assay/pkg/excerpt"
)

// Severity says whether a diagnostic stops the input from being used.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Pos is a position in a file. Line and Col are 1-based; zero means unknown.
// Col counts runes, not bytes.
type Pos struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
}

// String renders the position as file:line:col, leaving out unknown parts.
func (p Pos) String() string {
	if p.Line <= 0 {
		return p.File
	}
	// One allocation: the turns of a run each name their position.
	var num [20]byte
	var b strings.Builder
	b.Grow(len(p.File) + 2*len(num) + 2)
	b.WriteString(p.File)
	if b.Len() > 0 {
		b.WriteByte(':')
	}
	b.Write(strconv.AppendInt(num[:0], int64(p.Line), 10))
	if p.Col > 0 {
		b.WriteByte(':')
		b.Write(strconv.AppendInt(num[:0], int64(p.Col), 10))
	}
	return b.String()
}

// Less orders positions by file, then line, then column.
func (p Pos) Less(q Pos) bool {
	if p.File != q.File {
		return p.File < q.File
	}
	if p.Line != q.Line {
		return p.Line < q.Line
	}
	return p.Col < q.Col
}

// Diagnostic is one problem at one position.
type Diagnostic struct {
	Pos      Pos      `json:"pos"`
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
}

// Errorf builds an error diagnostic.
func Errorf(pos Pos, code, format string, args ...any) Diagnostic {
	return Diagnostic{Pos: pos, Severity: Error, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Warnf builds a warning diagnostic.
func Warnf(pos Pos, code, format string, args ...any) Diagnostic {
	return Diagnostic{Pos: pos, Severity: Warning, Code: code, Message: fmt.Sprintf(format, args...)}
}

// String renders "file:line:col: code: message" (warnings say so), with
// every control character escaped (excerpt.Escape): a message may quote a
// snapshot or a trace, and nothing raw reaches a terminal.
func (d Diagnostic) String() string {
	var b strings.Builder
	if s := d.Pos.String(); s != "" {
		b.WriteString(excerpt.EscapeLine(s))
		b.WriteString(": ")
	}
	if d.Severity == Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(excerpt.EscapeLine(d.Code))
	b.WriteString(": ")
	b.WriteString(excerpt.Escape(d.Message))
	return b.String()
}

// List is every problem found in one pass. It implements error.
type List []Diagnostic

// Error renders the list one diagnostic a line, without source excerpts.
func (l List) Error() string {
	lines := make([]string, len(l))
	for i, d := range l {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Sort orders the list by position, then code, then message; stable.
func (l List) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.Pos != b.Pos {
			return a.Pos.Less(b.Pos)
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Message < b.Message
	})
}

// HasErrors reports whether any diagnostic is an error (not a warning).
func (l List) HasErrors() bool {
	for _, d := range l {
		if d.Severity != Warning {
			return true
		}
	}
	return false
}

// Errors returns only the error diagnostics.
func (l List) Errors() List {
	var out List
	for _, d := range l {
		if d.Severity != Warning {
			out = append(out, d)
		}
	}
	return out
}

// Err returns the list as an error when it holds an error diagnostic, else nil.
func (l List) Err() error {
	if l.HasErrors() {
		return l
	}
	return nil
}

// Cap keeps the first n diagnostics and, when some were dropped, appends one
// saying how many (code "diag.truncated", at the position of the last kept one).
func (l List) Cap(n int) List {
	if len(l) <= n {
		return l
	}
	out := append(List(nil), l[:n]...)
	sev := Warning // a list of warnings stays usable when capped
	if l.HasErrors() {
		sev = Error
	}
	out = append(out, Diagnostic{Pos: Pos{File: l[n-1].Pos.File}, Severity: sev, Code: "diag.truncated",
		Message: fmt.Sprintf("%d more problems not shown", len(l)-n)})
	return out
}

// MarshalJSON renders the list as a JSON array (never null).
func (l List) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]Diagnostic(l))
}

// Render writes every diagnostic followed by its source line and a caret
// under the column, when src (the file's bytes, keyed by Pos.File) has it.
func (l List) Render(src map[string][]byte) string {
	var b strings.Builder
	for _, d := range l {
		b.WriteString(d.String())
		b.WriteByte('\n')
		if line, ok := sourceLine(src[d.Pos.File], d.Pos.Line); ok && d.Pos.Line > 0 {
			line, col := escapeLine(cut(line, d.Pos.Col))
			b.WriteString("    ")
			b.WriteString(line)
			b.WriteByte('\n')
			if col > 0 {
				b.WriteString("    ")
				b.WriteString(caretPad(line, col))
				b.WriteString("^\n")
			}
		}
	}
	return b.String()
}

// sourceLine returns line n (1-based) of src without its newline, with
// invalid UTF-8 replaced so a rendered excerpt is always printable.
func sourceLine(src []byte, n int) (string, bool) {
	if src == nil || n < 1 {
		return "", false
	}
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(src, '\n')
		if j < 0 {
			return "", false
		}
		src = src[j+1:]
	}
	if j := bytes.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	line := strings.TrimRight(strings.ToValidUTF8(string(src), "\uFFFD"), "\r")
	return line, true
}

// MaxExcerpt is the most runes of a source line Render shows: a longer line
// (a minified pack, say) is cut to a window around the column, marked "...".
const MaxExcerpt = 160

// cut cuts line to at most MaxExcerpt runes around rune column col (0:
// unknown, the start) and returns the cut line and col within it.
func cut(line string, col int) (string, int) {
	const mark = "..."
	if len(line) <= MaxExcerpt { // bytes >= runes
		return line, col
	}
	if n := utf8.RuneCountInString(line); col > n+1 {
		col = n + 1 // just past the end, as for an unexpected end of line
	}
	first := 0 // the first rune shown
	if col > MaxExcerpt/2 {
		first = col - 1 - MaxExcerpt/2
	}
	from, to, i := -1, len(line), 0
	for off := range line {
		if i == first {
			from = off
		}
		if i == first+MaxExcerpt {
			to = off
			break
		}
		i++
	}
	if from == 0 && to == len(line) {
		return line, col
	}
	out := line[from:to]
	if col > 0 {
		col -= first
	}
	if from > 0 {
		out = mark + out
		if col > 0 {
			col += len(mark)
		}
	}
	if to < len(line) {
		out += mark
	}
	return out, col
}

// escapeLine escapes the control characters of a source line (tabs are
// kept, for caretPad) and moves rune column col to stay under the same
// character.
func escapeLine(line string, col int) (string, int) {
	var b strings.Builder
	out, i := col, 1
	for _, r := range line {
		e := "\t"
		if r != '\t' {
			e = excerpt.EscapeRune(r, false)
		}
		if i < col {
			out += utf8.RuneCountInString(e) - 1
		}
		b.WriteString(e)
		i++
	}
	return b.String(), out
}

// caretPad returns the padding that puts a caret under rune column col,
// keeping tabs so the caret lines up with the source line as printed.
func caretPad(line string, col int) string {
	var b strings.Builder
	i := 1
	for _, r := range line {
		if i >= col {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		i++
	}
	for ; i < col; i++ {
		b.WriteByte(' ')
	}
	return b.String()
}
