package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds nesting so a hostile file cannot exhaust the stack.
const maxDepth = 256

// node is one JSON value with the byte offset where it starts.
type node struct {
	kind    kind
	off     int64
	text    string // string value, or a number's literal text
	boolean bool
	members []member // objects, in source order
	elems   []*node  // arrays
}

type member struct {
	key string
	off int64 // offset of the key
	val *node
}

type kind int

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// syntaxError is malformed JSON at an offset.
type syntaxError struct {
	off int64
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

// parseTree reads exactly one JSON value from src. On malformed input the
// error carries the offset (and message) encoding/json reports.
func parseTree(src []byte) (*node, error) {
	p := &parser{src: src}
	n, err := p.value(0)
	if err == nil {
		p.space()
		if p.i < len(p.src) {
			err = p.fail("unexpected data after the top-level value")
		}
	}
	if err != nil {
		return nil, absolute(src, err)
	}
	return n, nil
}

// parser is a small recursive-descent JSON reader that keeps offsets; it
// is several times faster than walking encoding/json's Decoder.Token.
type parser struct {
	src []byte
	i   int
}

func (p *parser) fail(format string, args ...any) error {
	return &syntaxError{off: int64(p.i), msg: fmt.Sprintf(format, args...)}
}

func (p *parser) space() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*node, error) {
	p.space()
	if p.i >= len(p.src) {
		return nil, p.fail("unexpected end of JSON input")
	}
	if depth > maxDepth {
		return nil, p.fail("nested more than %d levels deep", maxDepth)
	}
	n := &node{off: int64(p.i)}
	switch c := p.src[p.i]; {
	case c == '{':
		n.kind = kindObject
		p.i++
		p.space()
		if p.i < len(p.src) && p.src[p.i] == '}' {
			p.i++
			return n, nil
		}
		for {
			p.space()
			koff := p.i
			if p.i >= len(p.src) || p.src[p.i] != '"' {
				return nil, p.fail("want an object key")
			}
			key, err := p.str()
			if err != nil {
				return nil, err
			}
			p.space()
			if p.i >= len(p.src) || p.src[p.i] != ':' {
				return nil, p.fail("want ':' after an object key")
			}
			p.i++
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, member{key: key, off: int64(koff), val: v})
			p.space()
			if p.i < len(p.src) && p.src[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.src) && p.src[p.i] == '}' {
				p.i++
				return n, nil
			}
			return nil, p.fail("want ',' or '}' in an object")
		}
	case c == '[':
		n.kind = kindArray
		p.i++
		p.space()
		if p.i < len(p.src) && p.src[p.i] == ']' {
			p.i++
			return n, nil
		}
		for {
			e, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, e)
			p.space()
			if p.i < len(p.src) && p.src[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.src) && p.src[p.i] == ']' {
				p.i++
				return n, nil
			}
			return nil, p.fail("want ',' or ']' in a list")
		}
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		n.kind, n.text = kindString, s
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.src[p.i:], []byte(lit)) {
				p.i += len(lit)
				switch lit {
				case "null":
					n.kind = kindNull
				default:
					n.kind, n.boolean = kindBool, lit == "true"
				}
				return n, nil
			}
		}
		return nil, p.fail("invalid literal")
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		for p.i < len(p.src) && strings.IndexByte("+-.eE0123456789", p.src[p.i]) >= 0 {
			p.i++
		}
		text := string(p.src[start:p.i])
		if !json.Valid(p.src[start:p.i]) {
			p.i = start
			return nil, p.fail("invalid number %q", text)
		}
		n.kind, n.text = kindNumber, text
	default:
		return nil, p.fail("invalid character %q looking for beginning of value", c)
	}
	return n, nil
}

// str reads a JSON string at p.i (which holds the opening quote).
func (p *parser) str() (string, error) {
	start := p.i
	p.i++
	escaped := false
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '"':
			p.i++
			raw := p.src[start:p.i]
			if !escaped && utf8.Valid(raw) {
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				p.i = start
				return "", p.fail("invalid string: %v", err)
			}
			return s, nil
		case c == '\\':
			escaped = true
			p.i += 2
		case c < 0x20:
			return "", p.fail("invalid control character in a string")
		default:
			p.i++
		}
	}
	return "", p.fail("unexpected end of JSON input")
}

// absolute re-reads src with json.Unmarshal, whose syntax errors carry an
// absolute offset (the decoder's Token errors are relative to the value
// being read), and returns that error when there is one.
func absolute(src []byte, err error) error {
	var v any
	var se *json.SyntaxError
	if uerr := json.Unmarshal(src, &v); errors.As(uerr, &se) {
		off := se.Offset - 1
		if se.Offset >= int64(len(src)) && strings.Contains(se.Error(), "end of JSON input") {
			off = int64(len(src))
		}
		return &syntaxError{off: max(0, min(off, int64(len(src)))), msg: se.Error()}
	}
	return err
}
