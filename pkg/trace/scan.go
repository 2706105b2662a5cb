package trace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting of a trace line's JSON, so a hostile line
// cannot exhaust the stack.
const maxDepth = 10000

// scanner is a small validating JSON scanner over one trace line. It finds
// the spans of the few members the parser reads and skips everything else
// without building values, which is what makes Parse fast.
type scanner struct {
	b []byte
	i int
}

// syntaxError is invalid JSON at byte offset off of the scanned input.
type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string { return e.msg }

// span is a value's extent in the scanned input; kind is its first byte
// ('{', '[', '"', 't', 'f', 'n' or a number's first character), 0 when absent.
type span struct {
	start, end int
	kind       byte
}

func (s *scanner) fail(format string, args ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, args...), off: s.i}
}

// ws skips white space; a byte above ' ' is none, the common case of a
// compact line, decided by one comparison.
func (s *scanner) ws() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// members scans the object at the current position. At a level other than
// levelSkip it records in f the span of each member the parser reads at
// that level (a key is matched still escaped when it has escapes: such keys
// never match the plain names the parser looks for), and scans an object
// value the parser reads into (a payload, an event, its delta) at its own
// level in the same pass, so no part of a line is scanned twice.
func (s *scanner) members(depth int, f *lineFields, l level) error {
	if depth > maxDepth {
		return s.fail("exceeded max depth")
	}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return s.fail("expected an object")
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return nil
	}
	for {
		s.ws()
		if s.i >= len(s.b) {
			return s.fail("unexpected end of JSON input")
		}
		if s.b[s.i] != '"' {
			return s.fail("invalid character %q looking for beginning of object key string", s.b[s.i])
		}
		ks, ke, _, err := s.str()
		if err != nil {
			return err
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.fail("unexpected end of JSON input")
		}
		if s.b[s.i] != ':' {
			return s.fail("invalid character %q after object key", s.b[s.i])
		}
		s.i++
		s.ws()
		v := span{start: s.i}
		if s.i < len(s.b) {
			v.kind = s.b[s.i]
		}
		key := s.b[ks:ke]
		sub := levelSkip
		if l != levelSkip && v.kind == '{' {
			sub = f.nested(l, key)
		}
		if sub != levelSkip {
			err = s.members(depth+1, f, sub)
		} else {
			err = s.value(depth + 1)
		}
		if err != nil {
			return err
		}
		v.end = s.i
		if l != levelSkip {
			f.set(l, key, v)
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.fail("unexpected end of JSON input")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.fail("invalid character %q after object key:value pair", s.b[s.i])
		}
	}
}

// value skips one JSON value, validating it.
func (s *scanner) value(depth int) error {
	s.ws()
	if s.i >= len(s.b) {
		return s.fail("unexpected end of JSON input")
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.members(depth, nil, levelSkip)
	case c == '[':
		return s.array(depth + 1)
	case c == '"':
		_, _, _, err := s.str()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	default:
		return s.fail("invalid character %q looking for beginning of value", c)
	}
}

func (s *scanner) array(depth int) error {
	if depth > maxDepth {
		return s.fail("exceeded max depth")
	}
	s.i++ // '['
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return nil
	}
	for {
		if err := s.value(depth); err != nil {
			return err
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.fail("unexpected end of JSON input")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.fail("invalid character %q after array element", s.b[s.i])
		}
	}
}

func (s *scanner) literal(lit string) error {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		for k := 0; k < len(lit) && s.i < len(s.b); k++ {
			if s.b[s.i] != lit[k] {
				return s.fail("invalid character %q in literal %s", s.b[s.i], lit)
			}
			s.i++
		}
		return s.fail("unexpected end of JSON input")
	}
	s.i += len(lit)
	return nil
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

func (s *scanner) number() error {
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i >= len(s.b):
		return s.fail("unexpected end of JSON input")
	case s.b[s.i] == '0':
		s.i++
	case s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return s.fail("invalid character %q in numeric literal", s.b[s.i])
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return s.failAt("after decimal point in numeric literal")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return s.failAt("in exponent of numeric literal")
		}
	}
	return nil
}

func (s *scanner) failAt(where string) error {
	if s.i >= len(s.b) {
		return s.fail("unexpected end of JSON input")
	}
	return s.fail("invalid character %q %s", s.b[s.i], where)
}

// plainByte marks the bytes a string can hold without a closer look: not a
// quote, a backslash or a control character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hasZeroByte reports (as a non-zero value) whether a byte of w is zero.
func hasZeroByte(w uint64) uint64 { return (w - lsb) & ^w & msb }

// plainASCII reports whether raw, a validated string's content, is ASCII
// without escapes: its decoded value is raw itself, one rune a byte.
func plainASCII(raw []byte) bool {
	i := 0
	for ; i+8 <= len(raw); i += 8 {
		if w := binary.LittleEndian.Uint64(raw[i:]); w&msb != 0 || hasZeroByte(w^(lsb*'\\')) != 0 {
			return false
		}
	}
	for ; i < len(raw); i++ {
		if raw[i] >= utf8.RuneSelf || raw[i] == '\\' {
			return false
		}
	}
	return true
}

// str scans a string at the current position; start and end bound its
// content (without quotes); escaped reports whether it holds escapes.
func (s *scanner) str() (start, end int, escaped bool, err error) {
	b := s.b
	i := s.i + 1 // past the opening quote
	start = i
	for {
		// Skip eight plain bytes at a time while no byte of the word is a
		// quote, a backslash or a control character (SWAR); in the word that
		// holds one, the lowest flagged byte is the first such byte (a false
		// flag, from a borrow, is only ever above a true one). Bytewise in
		// the last bytes of the line.
		for {
			if i+8 > len(b) {
				for i < len(b) && plainByte[b[i]] {
					i++
				}
				break
			}
			w := binary.LittleEndian.Uint64(b[i:])
			if m := hasZeroByte(w^(lsb*'"')) | hasZeroByte(w^(lsb*'\\')) | ((w - lsb*0x20) &^ w & msb); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			s.i = i
			return 0, 0, false, s.fail("unexpected end of JSON input")
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return start, i, escaped, nil
		case c == '\\':
			escaped = true
			i++
			if i >= len(b) {
				s.i = i
				return 0, 0, false, s.fail("unexpected end of JSON input")
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				i++
				for k := 0; k < 4; k++ {
					if i >= len(b) {
						s.i = i
						return 0, 0, false, s.fail("unexpected end of JSON input")
					}
					if !isHex(b[i]) {
						s.i = i
						return 0, 0, false, s.fail("invalid character %q in \\u hexadecimal character escape", b[i])
					}
					i++
				}
			default:
				s.i = i
				return 0, 0, false, s.fail("invalid character %q in string escape code", b[i])
			}
		default:
			s.i = i
			return 0, 0, false, s.fail("invalid character %q in string literal", c)
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// stringValue decodes the already validated string value v of b, as
// encoding/json would (invalid UTF-8 and lone surrogates become U+FFFD).
// The event and tool names every trace repeats are returned without
// allocating.
func stringValue(b []byte, v span) string {
	raw := b[v.start+1 : v.end-1]
	if s, ok := interned(raw); ok {
		return s
	}
	if plainString(raw) {
		return string(raw)
	}
	return string(appendStringValue(make([]byte, 0, len(raw)), b, v))
}

// plainString reports whether raw needs no decoding: no escapes, valid UTF-8.
func plainString(raw []byte) bool {
	return bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw)
}

func interned(raw []byte) (string, bool) {
	switch string(raw) { // no allocation: the compiler special-cases this switch
	case TypeStreamEvent:
		return TypeStreamEvent, true
	case TypeRuntime:
		return TypeRuntime, true
	case TypeRuntimeRaw:
		return TypeRuntimeRaw, true
	case TypePhase:
		return TypePhase, true
	case TypeDone:
		return TypeDone, true
	case TypeFinalAnswer:
		return TypeFinalAnswer, true
	case TypeError:
		return TypeError, true
	case TypeSubAgentSpawned:
		return TypeSubAgentSpawned, true
	case EventToolStart:
		return EventToolStart, true
	case EventToolEnd:
		return EventToolEnd, true
	case EventLoopIteration:
		return EventLoopIteration, true
	case FinalizeTool:
		return FinalizeTool, true
	case "content_block_delta":
		return "content_block_delta", true
	case "text_delta":
		return "text_delta", true
	case "skill_dispatch":
		return "skill_dispatch", true
	}
	return "", false
}

// appendStringValue appends the decoded string value v of b to dst.
func appendStringValue(dst, b []byte, v span) []byte {
	raw := b[v.start+1 : v.end-1]
	if plainString(raw) {
		return append(dst, raw...)
	}
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			if c < utf8.RuneSelf {
				dst = append(dst, c)
				i++
				continue
			}
			r, size := utf8.DecodeRune(raw[i:])
			dst = utf8.AppendRune(dst, r) // RuneError for invalid bytes
			i += size
			continue
		}
		e := raw[i+1]
		i += 2
		switch e {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hexVal(raw[i : i+4])
			i += 4
			if utf16.IsSurrogate(r) {
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' && isHexAll(raw[i+2:i+6]) {
					if d := utf16.DecodeRune(r, hexVal(raw[i+2:i+6])); d != utf8.RuneError {
						dst = utf8.AppendRune(dst, d)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, e)
		}
	}
	return dst
}

func isHexAll(b []byte) bool {
	for _, c := range b {
		if !isHex(c) {
			return false
		}
	}
	return true
}
