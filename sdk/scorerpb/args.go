package scorerpb

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Tool-call arguments are JSON objects in a trace and on the plugin wire
// (ToolCall.args_json). Most are flat objects of strings, numbers and
// booleans, and encoding/json's reflection dominates the cost of decoding
// them, so these two functions handle the common shapes directly and fall
// back to encoding/json for anything else. The
// bytes they write are valid JSON that encoding/json reads back to the same
// value, and they read exactly what encoding/json reads.

// AppendArgs appends the tool-call arguments v as JSON.
func AppendArgs(buf []byte, v map[string]any) ([]byte, error) {
	out, ok := appendValue(buf, v)
	if ok {
		return out, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(buf, b...), nil
}

func appendValue(buf []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(buf, "null"...), true
	case bool:
		return strconv.AppendBool(buf, x), true
	case string:
		return appendString(buf, x)
	case float64:
		return appendFloat(buf, x)
	case int:
		return strconv.AppendInt(buf, int64(x), 10), true
	case int64:
		return strconv.AppendInt(buf, x, 10), true
	case []any:
		buf = append(buf, '[')
		for i, e := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			var ok bool
			if buf, ok = appendValue(buf, e); !ok {
				return buf, false
			}
		}
		return append(buf, ']'), true
	case map[string]any:
		// The entries are taken in one pass and sorted by key, rather than
		// the keys sorted and each value looked up again.
		var small [8]entry // most argument objects are small: no allocation
		entries := small[:0]
		for k, v := range x {
			entries = append(entries, entry{k, v})
		}
		slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.k, b.k) })
		return appendObject(buf, entries)
	}
	return buf, false
}

// appendObject appends entries, sorted by key, as a JSON object; it
// reports false for a key or value it does not write directly.
func appendObject(buf []byte, entries []entry) ([]byte, bool) {
	buf = append(buf, '{')
	for i := range entries {
		if i > 0 {
			buf = append(buf, ',')
		}
		var ok bool
		if buf, ok = appendString(buf, entries[i].k); !ok {
			return buf, false
		}
		buf = append(buf, ':')
		if buf, ok = appendValue(buf, entries[i].v); !ok {
			return buf, false
		}
	}
	return append(buf, '}'), true
}

// entry is one key and value of an argument object.
type entry struct {
	k string
	v any
}

// appendString appends s quoted when it needs no escaping (printable ASCII
// without '"', '\\', '<', '>', '&'); otherwise it reports false.
func appendString(buf []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return buf, false
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"'), true
}

func appendFloat(buf []byte, f float64) ([]byte, bool) {
	if f != f || f > 1e300 || f < -1e300 { // NaN, infinities and near: let encoding/json decide
		return buf, false
	}
	// Whole numbers, as counts and limits mostly are, as integers (-0
	// keeps its sign through AppendFloat).
	if f == math.Trunc(f) && f > -1e15 && f < 1e15 && (f != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(buf, int64(f), 10), true
	}
	return strconv.AppendFloat(buf, f, 'g', -1, 64), true
}

// ParseArgs decodes a JSON object of tool-call arguments exactly as
// encoding/json does into map[string]any.
func ParseArgs(b []byte) (map[string]any, error) {
	return parseArgs(b, nil)
}

// ArgsParser is ParseArgs for many argument objects that repeat keys and
// short values, such as the tool calls of the traces a host parses: the
// maps it returns share one string for each key and one boxed value for
// each short string value, as a plugin's Decoder shares them within a
// batch. Each map is its own; a box holds an immutable copy of its value,
// so sharing one changes nothing a reader of the maps can see. The zero
// ArgsParser is ready to use; one is not safe for concurrent use.
type ArgsParser struct{ sh *shared }

// Parse decodes b as ParseArgs does, sharing strings and boxes through a.
// Once a holds maxNames of either, it starts afresh.
func (a *ArgsParser) Parse(b []byte) (map[string]any, error) {
	if a.sh == nil || a.sh.full() {
		a.sh = newShared()
	}
	return parseArgs(b, a.sh)
}

// shared is what the argument objects of one batch share: short strings
// (keys, tool names) and, for short string values, the value boxed as an
// any, so that a value that repeats is not boxed again for every object.
// A box holds an immutable copy of its value, so sharing one changes
// nothing a scorer can see.
type shared struct {
	names nameTable
	boxes map[string]any
}

func newShared() *shared {
	return &shared{names: newNameTable(), boxes: map[string]any{}}
}

// full reports whether sh shares as many strings or boxes as it may.
func (sh *shared) full() bool {
	return sh.names.full() || len(sh.boxes) >= maxNames
}

// putShared keeps sh for a later batch, unless it is full: then the next
// batch starts afresh, with the strings of its own time.
func (dc *Decoder) putShared(sh *shared) {
	if !sh.full() {
		dc.shared.Put(sh)
	}
}

// parseArgs is ParseArgs sharing short strings and boxed values through sh
// when it is not nil.
func parseArgs(b []byte, sh *shared) (map[string]any, error) {
	p := argParser{b: b, sh: sh}
	p.space()
	if v, ok := p.object(); ok {
		p.space()
		if p.i == len(p.b) {
			return v, nil
		}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// argParser reads the JSON that AppendArgs writes; anything else makes it
// give up (ok false) so the caller falls back to encoding/json.
type argParser struct {
	b  []byte
	i  int
	sh *shared // shared strings and boxes, or nil
}

func (p *argParser) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\n' || p.b[p.i] == '\t' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *argParser) object() (map[string]any, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return nil, false
	}
	p.i++
	m := map[string]any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		p.space()
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		m[k] = v
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (p *argParser) array() ([]any, bool) {
	p.i++ // '['
	out := []any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return out, true
	}
	for {
		p.space()
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return out, true
		default:
			return nil, false
		}
	}
}

func (p *argParser) value() (any, bool) {
	if p.i >= len(p.b) {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.strValue()
	case c == 't':
		return true, p.word("true")
	case c == 'f':
		return false, p.word("false")
	case c == 'n':
		return nil, p.word("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, false
}

func (p *argParser) word(w string) bool {
	if len(p.b)-p.i < len(w) || string(p.b[p.i:p.i+len(w)]) != w {
		return false
	}
	p.i += len(w)
	return true
}

// str reads a string without escapes or non-ASCII bytes (an object's key).
func (p *argParser) str() (string, bool) {
	v, ok := p.raw()
	if !ok {
		return "", false
	}
	if p.sh == nil || len(v) > maxShared {
		return string(v), true
	}
	if s, ok := p.sh.names.lookup(v); ok {
		return s, true
	}
	s := string(v)
	p.sh.names.add(s)
	return s, true
}

// strValue is str for a value: a short one comes boxed from the batch's
// boxes, in the one lookup str would make.
func (p *argParser) strValue() (any, bool) {
	v, ok := p.raw()
	if !ok {
		return nil, false
	}
	if p.sh == nil || len(v) > maxShared {
		return string(v), true
	}
	if box, ok := p.sh.boxes[string(v)]; ok {
		return box, true
	}
	s := string(v)
	var box any = s
	if len(p.sh.boxes) < maxNames {
		p.sh.boxes[s] = box
	}
	return box, true
}

// raw reads a string without escapes or non-ASCII bytes and returns its
// contents, still in p.b.
func (p *argParser) raw() ([]byte, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			p.i = j + 1
			return p.b[start:j], true
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return nil, false
		}
	}
	return nil, false
}

// number reads a JSON number (the grammar checked strictly) as float64.
// An integer of at most 15 digits (exact in a float64) is computed
// directly, and one from 0 to 255 comes pre-boxed (smallInts); "-0" is
// left to strconv, which keeps its sign.
func (p *argParser) number() (any, bool) {
	start, j := p.i, p.i
	neg := j < len(p.b) && p.b[j] == '-'
	if neg {
		j++
	}
	switch {
	case j < len(p.b) && p.b[j] == '0':
		j++
	case j < len(p.b) && p.b[j] >= '1' && p.b[j] <= '9':
		for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
			j++
		}
	default:
		return nil, false
	}
	if digits := p.b[start:j]; (j >= len(p.b) || (p.b[j] != '.' && p.b[j] != 'e' && p.b[j] != 'E')) && len(digits) <= 15 {
		if neg {
			digits = digits[1:]
		}
		var n int64
		for _, c := range digits {
			n = n*10 + int64(c-'0')
		}
		switch {
		case neg && n == 0:
		case neg:
			p.i = j
			return float64(-n), true
		case n < int64(len(smallInts)):
			p.i = j
			return smallInts[n], true
		default:
			p.i = j
			return float64(n), true
		}
	}
	if j < len(p.b) && p.b[j] == '.' {
		j++
		d := j
		for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
			j++
		}
		if j == d {
			return nil, false
		}
	}
	if j < len(p.b) && (p.b[j] == 'e' || p.b[j] == 'E') {
		j++
		if j < len(p.b) && (p.b[j] == '+' || p.b[j] == '-') {
			j++
		}
		d := j
		for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
			j++
		}
		if j == d {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(p.b[start:j]), 64)
	if err != nil {
		return nil, false
	}
	p.i = j
	return f, true
}

// smallInts are the numbers 0 to 255 boxed as float64, as argument
// objects' counts and limits most often are: boxing one allocates.
var smallInts = func() (t [256]any) {
	for i := range t {
		t[i] = float64(i)
	}
	return t
}()

// maxShared is the longest string parseArgs shares, and maxNames how many
// distinct strings a batch shares at most.
const (
	maxShared = 64
	maxNames  = 4096
)
