package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// DefaultMaxDepth bounds nesting when Options.MaxDepth is zero, so a
// hostile file cannot exhaust the stack.
const DefaultMaxDepth = 256

// Errors an *Error wraps, to tell its kinds apart with errors.Is.
var (
	ErrSyntax       = errors.New("not valid JSON")
	ErrTooDeep      = errors.New("nested too deep")
	ErrDuplicateKey = errors.New("duplicate key")
	ErrUnknownField = errors.New("unknown field")
	ErrType         = errors.New("wrong type")
	ErrTooLarge     = errors.New("file too large")
)

// Error is a problem at a byte offset of the text read.
type Error struct {
	Off  int    // offset of the offending byte, key or value
	Path string // the value's path ("plugins[0].id"); "" at the top level or for malformed JSON
	Msg  string
	Err  error // ErrSyntax, ErrTooDeep, ErrDuplicateKey, ErrUnknownField or ErrType (then wrapping encoding/json's error)
}

// Error renders "path: message", or the message alone without a path.
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Options tune Parse and Decode. The zero value parses everything, allows duplicate
// keys (each is kept in Node.Members) and nests up to DefaultMaxDepth.
type Options struct {
	// MaxDepth bounds nesting; 0 means DefaultMaxDepth.
	MaxDepth int
	// BuildDepth, when positive, builds nodes only that many levels deep:
	// values deeper are checked and kept as spans (Kind, Off, End, and no
	// Text, Members or Elems), so a large nested value costs no tree.
	BuildDepth int
	// RejectDuplicates makes a key repeated in one object an error at the
	// second key (ErrDuplicateKey).
	RejectDuplicates bool
	// AllowUnknownFields makes Decode ignore keys that name no field, as
	// json.Unmarshal does.
	AllowUnknownFields bool
	// Keys are object keys the caller expects: a key equal to one of them
	// is that string, not a copy of the bytes (a key costs no allocation).
	Keys []string
}

// Parse reads exactly one JSON value from src, optionally surrounded by
// white space. A malformed text is an *Error at the offending byte whose
// message is encoding/json's; the end of the input is offset len(src).
func Parse(src []byte, o Options) (*Node, error) {
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	p := parsers.Get().(*parser)
	p.src, p.i, p.o = src, 0, o
	n, err := p.value(0, true)
	if err == nil {
		p.space()
		if p.i < len(p.src) {
			err = p.fail("invalid character %s after top-level value", quoteChar(p.src[p.i]))
		}
	}
	p.release()
	if err != nil {
		return nil, syntaxFromStdlib(src, err)
	}
	return n, nil
}

// parser is a recursive-descent JSON reader that keeps offsets; it is
// several times faster than walking encoding/json's Decoder.Token.
type parser struct {
	src []byte
	i   int
	o   Options
	// scratch is the node of every value that is checked but not kept
	// (deeper than BuildDepth): such a value costs no allocation.
	scratch *Node
	// nodes is where kept nodes are taken from, a block at a time, not one
	// allocation each.
	nodes []Node
	// members and elems hold the members and elements of the objects and
	// arrays being read, innermost last; a finished one's are copied out
	// at their length (one allocation, none wasted on doubling).
	members   []Member
	elems     []*Node
	memberBuf [16]Member
	elemBuf   [16]*Node
}

// parsers recycles parsers and their buffers: a run parses a turns line
// or two for every turn.
var parsers = sync.Pool{New: func() any {
	p := &parser{scratch: new(Node)}
	p.members, p.elems = p.memberBuf[:0], p.elemBuf[:0]
	return p
}}

// maxPooledBuf is the most members or elements a pooled parser's buffers
// keep room for.
const maxPooledBuf = 1024

// release gives p back to parsers, holding nothing of the text or the tree
// it read.
func (p *parser) release() {
	clear(p.members) // left by an error; a finished value clears its own
	clear(p.elems)
	if cap(p.members) > maxPooledBuf {
		p.members = p.memberBuf[:0]
	}
	if cap(p.elems) > maxPooledBuf {
		p.elems = p.elemBuf[:0]
	}
	p.members, p.elems = p.members[:0], p.elems[:0]
	*p.scratch = Node{}
	p.src, p.nodes, p.o = nil, nil, Options{}
	parsers.Put(p)
}

// The blocks newNode allocates: minNodeBlock nodes first (768 bytes, about
// what a turns line's object and up to seven members took one by one),
// then twice the last block, at most maxNodeBlock.
const (
	minNodeBlock = 8
	maxNodeBlock = 64
)

// newNode is a new node at off, kept.
func (p *parser) newNode(off int) *Node {
	if len(p.nodes) == cap(p.nodes) {
		p.nodes = make([]Node, 0, min(max(2*cap(p.nodes), minNodeBlock), maxNodeBlock))
	}
	p.nodes = append(p.nodes, Node{Off: off})
	return &p.nodes[len(p.nodes)-1]
}

func (p *parser) fail(format string, args ...any) error {
	return &Error{Off: p.i, Msg: fmt.Sprintf(format, args...), Err: ErrSyntax}
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

// build reports whether the children of a value at depth are built.
func (p *parser) build(depth int) bool { return p.o.BuildDepth <= 0 || depth < p.o.BuildDepth }

// value reads the value at p.i; keep says whether its parent keeps it (a
// value not kept is read into p.scratch, which any other may overwrite).
func (p *parser) value(depth int, keep bool) (*Node, error) {
	p.space()
	if p.i >= len(p.src) {
		return nil, p.fail("unexpected end of JSON input")
	}
	if depth > p.o.MaxDepth {
		return nil, &Error{Off: p.i, Msg: fmt.Sprintf("nested more than %d levels deep", p.o.MaxDepth), Err: ErrTooDeep}
	}
	var n *Node
	if keep {
		n = p.newNode(p.i)
	} else {
		n = p.scratch
		*n = Node{Off: p.i}
	}
	var err error
	switch c := p.src[p.i]; {
	case c == '{':
		n.Kind = Object
		err = p.object(n, depth)
	case c == '[':
		n.Kind = Array
		err = p.array(n, depth)
	case c == '"':
		n.Kind = String
		n.Text, err = p.str(keep, nil)
	case c == 't' || c == 'f' || c == 'n':
		err = p.literal(n)
	case c == '-' || (c >= '0' && c <= '9'):
		n.Kind = Number
		err = p.number(n, keep)
	default:
		err = p.fail("invalid character %s looking for beginning of value", quoteChar(c))
	}
	if err != nil {
		return nil, err
	}
	n.End = p.i
	return n, nil
}

func (p *parser) object(n *Node, depth int) error {
	p.i++
	p.space()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		return nil
	}
	build := p.build(depth)
	var seen map[string]bool
	if p.o.RejectDuplicates && build {
		seen = map[string]bool{}
	}
	start := len(p.members)
	for {
		p.space()
		koff := p.i
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			return p.fail("want an object key")
		}
		key, err := p.str(build, p.o.Keys)
		if err != nil {
			return err
		}
		p.space()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return p.fail("want ':' after an object key")
		}
		p.i++
		v, err := p.value(depth+1, build)
		if err != nil {
			return err
		}
		if seen != nil {
			if seen[key] {
				return &Error{Off: koff, Msg: fmt.Sprintf("duplicate key %q", key), Err: ErrDuplicateKey}
			}
			seen[key] = true
		}
		if build {
			p.members = append(p.members, Member{Key: key, Off: koff, Value: v})
		}
		p.space()
		if p.i < len(p.src) && p.src[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.src) && p.src[p.i] == '}' {
			p.i++
			if build {
				n.Members = append([]Member(nil), p.members[start:]...)
				clear(p.members[start:]) // no node kept alive by the buffer
				p.members = p.members[:start]
			}
			return nil
		}
		return p.fail("want ',' or '}' in an object")
	}
}

func (p *parser) array(n *Node, depth int) error {
	p.i++
	p.space()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		return nil
	}
	build := p.build(depth)
	start := len(p.elems)
	for {
		e, err := p.value(depth+1, build)
		if err != nil {
			return err
		}
		if build {
			p.elems = append(p.elems, e)
		}
		p.space()
		if p.i < len(p.src) && p.src[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.src) && p.src[p.i] == ']' {
			p.i++
			if build {
				n.Elems = append([]*Node(nil), p.elems[start:]...)
				clear(p.elems[start:])
				p.elems = p.elems[:start]
			}
			return nil
		}
		return p.fail("want ',' or ']' in an array")
	}
}

func (p *parser) literal(n *Node) error {
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(p.src[p.i:], []byte(lit)) {
			p.i += len(lit)
			if lit == "null" {
				n.Kind = Null
			} else {
				n.Kind, n.Bool = Bool, lit == "true"
			}
			return nil
		}
	}
	return p.fail("invalid literal")
}

func (p *parser) number(n *Node, keep bool) error {
	start := p.i
	for p.i < len(p.src) && strings.IndexByte("+-.eE0123456789", p.src[p.i]) >= 0 {
		p.i++
	}
	if !json.Valid(p.src[start:p.i]) {
		p.i = start
		return p.fail("invalid number")
	}
	if keep {
		n.Text = string(p.src[start:p.i])
	}
	return nil
}

// str reads a JSON string at p.i (which holds the opening quote), returning
// its value when keep is set: the one of known equal to it, if any, else a
// copy.
func (p *parser) str(keep bool, known []string) (string, error) {
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
				if !keep {
					return "", nil
				}
				text := raw[1 : len(raw)-1]
				for _, k := range known {
					if len(k) == len(text) && k == string(text) {
						return k, nil
					}
				}
				return string(text), nil
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
			return "", p.fail("invalid character %s in string literal", quoteChar(c))
		default:
			p.i++
		}
	}
	return "", p.fail("unexpected end of JSON input")
}

// syntaxFromStdlib replaces a syntax error with encoding/json's, whose
// wording people know, at the byte it points at (encoding/json's offset is
// just past it; the end of the input is len(src)). Errors encoding/json
// does not see (depth, duplicate keys) are kept.
func syntaxFromStdlib(src []byte, err error) error {
	if !errors.Is(err, ErrSyntax) {
		return err
	}
	var v any
	var se *json.SyntaxError
	if uerr := json.Unmarshal(src, &v); errors.As(uerr, &se) {
		off := se.Offset - 1
		if se.Offset >= int64(len(src)) && strings.Contains(se.Error(), "end of JSON input") {
			off = int64(len(src))
		}
		return &Error{Off: int(max(0, min(off, int64(len(src))))), Msg: se.Error(), Err: ErrSyntax}
	}
	return err
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}
