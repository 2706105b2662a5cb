package taskeval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/assay-eval/assay/pkg/diag"
)

// Diagnostic codes.
const (
	CodeSyntax   = "taskeval.syntax"   // the text is not JSON
	CodeField    = "taskeval.field"    // a field is missing, unknown or of the wrong type
	CodeScore    = "taskeval.score"    // a score is not an integer 0..100
	CodeAI       = "taskeval.ai"       // the AI answer breaks the contract
	CodeEvidence = "taskeval.evidence" // an AI evidence id is not in the bundle
)

// node is a decoded JSON value with the byte offset where it starts.
type node struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	off   int
	keys  []string
	vals  map[string]*node
	koff  map[string]int
	items []*node
	str   string
	num   json.Number
	b     bool
}

func (n *node) kindName() string {
	switch n.kind {
	case 'o':
		return "an object"
	case 'a':
		return "an array"
	case 's':
		return "a string"
	case 'n':
		return "a number"
	case 'b':
		return "a boolean"
	}
	return "null"
}

// reader decodes one JSON text into nodes and collects diagnostics.
// base is added to every offset (the text may start inside a larger file).
type reader struct {
	file  string
	src   []byte // the whole file, for line:col
	base  int
	diags diag.List
}

func (r *reader) pos(off int) diag.Pos {
	return diag.OffsetPos(r.file, r.src, off+r.base)
}

func (r *reader) errf(off int, code, format string, args ...any) {
	r.diags = append(r.diags, diag.Errorf(r.pos(off), code, format, args...))
}

// parse decodes text (which starts at r.base in r.src). It returns nil
// after reporting a syntax error.
func (r *reader) parse(text []byte) *node {
	// json.Unmarshal reports syntax errors at the offending byte; the
	// token walk below then only meets well-formed input.
	var probe any
	if err := json.Unmarshal(text, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off := int(se.Offset) - 1
			msg := strings.TrimPrefix(se.Error(), "json: ")
			if msg == "unexpected end of JSON input" {
				off, msg = len(text), "unexpected end of input"
			}
			r.errf(max(off, 0), CodeSyntax, "invalid JSON: %s", msg)
			return nil
		}
		r.errf(0, CodeSyntax, "invalid JSON: %v", err)
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	n, err := r.value(dec, text)
	switch {
	case err == nil:
		return n
	case errors.Is(err, errDupKey):
		// already reported
	default:
		r.errf(int(dec.InputOffset()), CodeSyntax, "invalid JSON: %v", err)
	}
	return nil
}

var errDupKey = errors.New("duplicate key")

// skipSpace returns the offset of the first byte at or after off that is
// not JSON whitespace, ':' or ','.
func skipSpace(text []byte, off int) int {
	for off < len(text) {
		switch text[off] {
		case ' ', '\t', '\n', '\r', ':', ',':
			off++
			continue
		}
		break
	}
	return off
}

func (r *reader) value(dec *json.Decoder, text []byte) (*node, error) {
	start := skipSpace(text, int(dec.InputOffset()))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	n := &node{off: start}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n.kind = 'o'
			n.vals, n.koff = map[string]*node{}, map[string]int{}
			for dec.More() {
				koff := skipSpace(text, int(dec.InputOffset()))
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := r.value(dec, text)
				if err != nil {
					return nil, err
				}
				if _, dup := n.vals[k]; dup {
					r.errf(koff, CodeSyntax, "duplicate key %q", k)
					return nil, errDupKey
				}
				n.keys = append(n.keys, k)
				n.vals[k], n.koff[k] = v, koff
			}
		case '[':
			n.kind = 'a'
			for dec.More() {
				v, err := r.value(dec, text)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
		}
		if _, err := dec.Token(); err != nil { // closing delimiter
			return nil, err
		}
	case string:
		n.kind, n.str = 's', t
	case json.Number:
		n.kind, n.num = 'n', t
	case bool:
		n.kind, n.b = 'b', t
	case nil:
		n.kind = 'z'
	}
	return n, nil
}

// fields is a checked JSON object: get records which keys were read, done
// reports the unknown ones.
type fields struct {
	r    *reader
	n    *node
	path string
	used map[string]bool
}

// object checks that n is an object; ok is false (and reported) otherwise.
func (r *reader) object(n *node, path string) (*fields, bool) {
	if n.kind != 'o' {
		r.errf(n.off, CodeField, "%s: want an object, got %s", pathOr(path, "top level"), n.kindName())
		return nil, false
	}
	return &fields{r: r, n: n, path: path, used: map[string]bool{}}, true
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// get returns the value of key (nil when absent or null).
func (f *fields) get(key string) *node {
	f.used[key] = true
	v := f.n.vals[key]
	if v != nil && v.kind == 'z' {
		return nil
	}
	return v
}

// done reports every key that was not read, at the key.
func (f *fields) done() {
	for _, k := range f.n.keys {
		if !f.used[k] {
			f.r.errf(f.n.koff[k], CodeField, "%s: unknown field %q", f.pathOrTop(), k)
		}
	}
}

func (f *fields) pathOrTop() string {
	if f.path == "" {
		return "top level"
	}
	return f.path
}

// missing reports a required key that is absent.
func (f *fields) missing(key string) {
	f.r.errf(f.n.off, CodeField, "%s: missing required field %q", f.pathOrTop(), key)
}

// str reads an optional string field.
func (f *fields) str(key string) string {
	v := f.get(key)
	if v == nil {
		return ""
	}
	if v.kind != 's' {
		f.r.errf(v.off, CodeField, "%s: want a string, got %s", join(f.path, key), v.kindName())
		return ""
	}
	return v.str
}

// reqStr reads a required, non-blank string field.
func (f *fields) reqStr(key string) string {
	v := f.get(key)
	if v == nil {
		f.missing(key)
		return ""
	}
	s := f.str(key)
	if v.kind == 's' && strings.TrimSpace(s) == "" {
		f.r.errf(v.off, CodeField, "%s: must not be blank", join(f.path, key))
	}
	return s
}

// scalar reads an optional string, number or boolean as text.
func (f *fields) scalar(key string) string {
	v := f.get(key)
	if v == nil {
		return ""
	}
	switch v.kind {
	case 's':
		return v.str
	case 'n':
		return v.num.String()
	case 'b':
		return strconv.FormatBool(v.b)
	}
	f.r.errf(v.off, CodeField, "%s: want a string, number or boolean, got %s", join(f.path, key), v.kindName())
	return ""
}

// integer reads an optional non-negative integer field.
func (f *fields) integer(key string) int {
	v := f.get(key)
	if v == nil {
		return 0
	}
	x, err := strconv.ParseFloat(v.num.String(), 64)
	if v.kind != 'n' || err != nil || x != math.Trunc(x) || x < 0 || x > math.MaxInt32 {
		f.r.errf(v.off, CodeField, "%s: want a non-negative integer, got %s", join(f.path, key), describe(v))
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
	return f.r.score(v, join(f.path, key))
}

func (r *reader) score(v *node, path string) (int, bool) {
	if v.kind != 'n' {
		r.errf(v.off, CodeScore, "%s: must be an integer between 0 and 100, got %s", path, describe(v))
		return 0, false
	}
	x, err := strconv.ParseFloat(v.num.String(), 64)
	if err != nil {
		x = math.NaN()
	}
	s, err := CheckScore(path, x)
	if err != nil {
		r.errf(v.off, CodeScore, "%s: must be an integer between 0 and 100, got %s", path, v.num)
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
	if v.kind != 's' {
		f.r.errf(v.off, CodeField, "%s: want an RFC 3339 timestamp string, got %s", join(f.path, key), v.kindName())
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v.str)
	if err != nil {
		f.r.errf(v.off, CodeField, "%s: want an RFC 3339 timestamp such as 2026-05-01T12:00:00Z, got %q", join(f.path, key), v.str)
		return time.Time{}
	}
	return t
}

// array reads an optional array field, calling each for every item.
func (f *fields) array(key string, each func(item *node, path string)) {
	v := f.get(key)
	if v == nil {
		return
	}
	p := join(f.path, key)
	if v.kind != 'a' {
		f.r.errf(v.off, CodeField, "%s: want an array, got %s", p, v.kindName())
		return
	}
	for i, it := range v.items {
		each(it, fmt.Sprintf("%s[%d]", p, i))
	}
}

// objects reads an optional array field of objects, calling each for every
// item that is an object and then reporting the keys each did not read.
func (f *fields) objects(key string, each func(item *fields, path string)) {
	f.array(key, func(it *node, p string) {
		o, ok := f.r.object(it, p)
		if !ok {
			return
		}
		each(o, p)
		o.done()
	})
}

func describe(v *node) string {
	switch v.kind {
	case 'n':
		return v.num.String()
	case 's':
		return strconv.Quote(v.str)
	}
	return v.kindName()
}
