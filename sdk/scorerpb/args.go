package scorerpb

import (
	"encoding/json"
	"slices"
	"strconv"
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
		var small [8]string // most argument objects are small: no allocation
		keys := small[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf = append(buf, '{')
		for i, k := range keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			var ok bool
			if buf, ok = appendString(buf, k); !ok {
				return buf, false
			}
			buf = append(buf, ':')
			if buf, ok = appendValue(buf, x[k]); !ok {
				return buf, false
			}
		}
		return append(buf, '}'), true
	}
	return buf, false
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
	return strconv.AppendFloat(buf, f, 'g', -1, 64), true
}

// ParseArgs decodes a JSON object of tool-call arguments exactly as
// encoding/json does into map[string]any.
func ParseArgs(b []byte) (map[string]any, error) {
	return parseArgs(b, nil)
}

// parseArgs is ParseArgs sharing short strings (keys, small values) through
// names when it is not nil.
func parseArgs(b []byte, names map[string]string) (map[string]any, error) {
	p := argParser{b: b, names: names}
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
	b     []byte
	i     int
	names map[string]string // shared strings, or nil
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
		return p.str()
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

// str reads a string without escapes or non-ASCII bytes.
func (p *argParser) str() (string, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			p.i = j + 1
			if p.names == nil || j-start > maxShared {
				return string(p.b[start:j]), true
			}
			if s, ok := p.names[string(p.b[start:j])]; ok {
				return s, true
			}
			s := string(p.b[start:j])
			if len(p.names) < maxNames {
				p.names[s] = s
			}
			return s, true
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return "", false
		}
	}
	return "", false
}

// number reads a JSON number (the grammar checked strictly) as float64.
func (p *argParser) number() (any, bool) {
	start, j := p.i, p.i
	if j < len(p.b) && p.b[j] == '-' {
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

// maxShared is the longest string parseArgs shares, and maxNames how many
// distinct strings a batch shares at most.
const (
	maxShared = 64
	maxNames  = 4096
)
