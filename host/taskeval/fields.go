package taskeval

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/jsonpos"
)

// Diagnostic codes.
const (
	CodeSyntax   = "taskeval.syntax"   // the text is not JSON
	CodeField    = "taskeval.field"    // a field is missing, unknown or of the wrong type
	CodeScore    = "taskeval.score"    // a score is not an integer 0..100
	CodeAI       = "taskeval.ai"       // the AI answer breaks the contract
	CodeEvidence = "taskeval.evidence" // an AI evidence id is not in the bundle
)

// reader decodes one JSON text into a jsonpos tree and collects
// diagnostics. Its source's Base is where the text starts in the file.
type reader struct {
	src   jsonpos.Source
	diags diag.List
}

func (r *reader) pos(off int) diag.Pos { return r.src.Pos(off) }

func (r *reader) errf(off int, code, format string, args ...any) {
	r.diags = append(r.diags, diag.Errorf(r.pos(off), code, format, args...))
}

// parse decodes text (which starts at r.src.Base in the file). A repeated
// key is an error. It returns nil after reporting a syntax error.
func (r *reader) parse(text []byte) *jsonpos.Node {
	n, err := jsonpos.Parse(text, jsonpos.Options{RejectDuplicates: true})
	var e *jsonpos.Error
	switch {
	case err == nil:
		return n
	case errors.Is(err, jsonpos.ErrDuplicateKey) && errors.As(err, &e):
		r.errf(e.Off, CodeSyntax, "%s", e.Msg)
	case errors.As(err, &e):
		r.errf(e.Off, CodeSyntax, "invalid JSON: %s", strings.Replace(e.Msg, "end of JSON input", "end of input", 1))
	default:
		r.errf(0, CodeSyntax, "invalid JSON: %v", err)
	}
	return nil
}

// fields is a checked JSON object: get records which keys were read, done
// reports the unknown ones.
type fields struct {
	r    *reader
	n    *jsonpos.Node
	path string
	used map[string]bool
}

// object checks that n is an object; ok is false (and reported) otherwise.
func (r *reader) object(n *jsonpos.Node, path string) (*fields, bool) {
	if n.Kind != jsonpos.Object {
		r.errf(n.Off, CodeField, "%s: want an object, got %s", pathOr(path, "top level"), n.Kind.String())
		return nil, false
	}
	return &fields{r: r, n: n, path: path, used: map[string]bool{}}, true
}

// get returns the value of key (nil when absent or null).
func (f *fields) get(key string) *jsonpos.Node {
	f.used[key] = true
	m := f.n.Get(key)
	if m == nil || m.Value.Kind == jsonpos.Null {
		return nil
	}
	return m.Value
}

// done reports every key that was not read, at the key.
func (f *fields) done() {
	for _, m := range f.n.Members {
		if !f.used[m.Key] {
			f.r.errf(m.Off, CodeField, "%s: unknown field %q", pathOr(f.path, "top level"), m.Key)
		}
	}
}

// missing reports a required key that is absent.
func (f *fields) missing(key string) {
	f.r.errf(f.n.Off, CodeField, "%s: missing required field %q", pathOr(f.path, "top level"), key)
}

// str reads an optional string field.
func (f *fields) str(key string) string {
	v := f.get(key)
	if v == nil {
		return ""
	}
	if v.Kind != jsonpos.String {
		f.r.errf(v.Off, CodeField, "%s: want a string, got %s", jsonpos.Join(f.path, key), v.Kind.String())
		return ""
	}
	return v.Text
}

// reqStr reads a required, non-blank string field.
func (f *fields) reqStr(key string) string {
	v := f.get(key)
	if v == nil {
		f.missing(key)
		return ""
	}
	s := f.str(key)
	if v.Kind == jsonpos.String && strings.TrimSpace(s) == "" {
		f.r.errf(v.Off, CodeField, "%s: must not be blank", jsonpos.Join(f.path, key))
	}
	return s
}

// scalar reads an optional string, number or boolean as text.
func (f *fields) scalar(key string) string {
	v := f.get(key)
	if v == nil {
		return ""
	}
	switch v.Kind {
	case jsonpos.String:
		return v.Text
	case jsonpos.Number:
		return v.Text
	case jsonpos.Bool:
		return strconv.FormatBool(v.Bool)
	}
	f.r.errf(v.Off, CodeField, "%s: want a string, number or boolean, got %s", jsonpos.Join(f.path, key), v.Kind.String())
	return ""
}

// integer reads an optional non-negative integer field.
func (f *fields) integer(key string) int {
	v := f.get(key)
	if v == nil {
		return 0
	}
	x, err := strconv.ParseFloat(v.Text, 64)
	if v.Kind != jsonpos.Number || err != nil || x != math.Trunc(x) || x < 0 || x > math.MaxInt32 {
		f.r.errf(v.Off, CodeField, "%s: want a non-negative integer, got %s", jsonpos.Join(f.path, key), describe(v))
		return 0
	}
	return int(x)
}

// score reads a required score, an integer 0..100; ok is false when it is
// missing or invalid (and reported).
func (f *fields) score(key string) (int, bool) {
	v := f.get(key)
	if v == nil {
		f.missing(key)
		return 0, false
	}
	return f.r.score(v, jsonpos.Join(f.path, key))
}

func (r *reader) score(v *jsonpos.Node, path string) (int, bool) {
	if v.Kind != jsonpos.Number {
		r.errf(v.Off, CodeScore, "%s: must be an integer between 0 and 100, got %s", path, describe(v))
		return 0, false
	}
	x, err := strconv.ParseFloat(v.Text, 64)
	if err != nil {
		x = math.NaN()
	}
	s, err := CheckScore(path, x)
	if err != nil {
		r.errf(v.Off, CodeScore, "%s: must be an integer between 0 and 100, got %s", path, v.Text)
		return 0, false
	}
	return s, true
}

// time reads an optional RFC 3339 timestamp.
func (f *fields) time(key string) time.Time {
	v := f.get(key)
	if v == nil {
		return time.Time{}
	}
	if v.Kind != jsonpos.String {
		f.r.errf(v.Off, CodeField, "%s: want an RFC 3339 timestamp string, got %s", jsonpos.Join(f.path, key), v.Kind.String())
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v.Text)
	if err != nil {
		f.r.errf(v.Off, CodeField, "%s: want an RFC 3339 timestamp such as 2026-05-01T12:00:00Z, got %q", jsonpos.Join(f.path, key), v.Text)
		return time.Time{}
	}
	return t
}

// array reads an optional array field, calling each for every item.
func (f *fields) array(key string, each func(item *jsonpos.Node, path string)) {
	v := f.get(key)
	if v == nil {
		return
	}
	p := jsonpos.Join(f.path, key)
	if v.Kind != jsonpos.Array {
		f.r.errf(v.Off, CodeField, "%s: want an array, got %s", p, v.Kind.String())
		return
	}
	for i, it := range v.Elems {
		each(it, fmt.Sprintf("%s[%d]", p, i))
	}
}

// objects reads an optional array field of objects, calling each for every
// item that is an object and then reporting the keys each did not read.
func (f *fields) objects(key string, each func(item *fields, path string)) {
	f.array(key, func(it *jsonpos.Node, p string) {
		o, ok := f.r.object(it, p)
		if !ok {
			return
		}
		each(o, p)
		o.done()
	})
}

func describe(v *jsonpos.Node) string {
	switch v.Kind {
	case jsonpos.Number:
		return v.Text
	case jsonpos.String:
		return strconv.Quote(v.Text)
	}
	return v.Kind.String()
}
