package pack

import (
	"bytes"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Half of reading a large pack was yaml.v3 scanning and parsing its tasks,
// which are nearly always written in a small part of YAML: block mappings
// of simple keys, block lists of mappings, one-line plain scalars, folded
// and literal blocks of evenly indented lines, and one-line flow lists of
// simple words. fastSeq reads a group of tasks written only in that part
// into the node tree the builder would build from yaml.v3's yaml.Node tree
// (without building either), and refuses anything else
// (a comment, a quote, a blank line between tasks, a tab, a plain scalar
// that could be other than a string or a plain integer, a multi-line plain
// scalar...), which yaml.v3 then parses as before. TestFastYAMLSame and
// FuzzFastYAMLSame check that whatever it accepts, it reads as yaml.v3 and
// the builder do.

// yline is one line of the text fastSeq reads.
type yline struct {
	num  int    // 1-based
	ind  int    // leading spaces
	text []byte // after the indentation, without the line break
}

// fastYAML reads lines; ok is cleared at the first thing it does not know.
type fastYAML struct {
	lines   []yline
	i       int
	ok      bool
	endNL   bool // the last line of text has a line break
	file    *string
	lineOff int               // added to every line
	vals    []*node           // the values of the collections being read
	keys    []mkey            // the keys of the mappings being read
	slab    []node            // nodes are allocated from it
	left    int               // how many more nodes fastSeq counted
	ptrs    []*node           // and their items
	mkeys   []mkey            // and their keys
	strs    map[string]string // the keys read, to share their strings
	buf     []byte            // a block scalar's value as it is read
}

// fastReaders keeps the readers' line lists, stacks and string maps from
// one group of tasks to the next.
var fastReaders = sync.Pool{New: func() any { return &fastYAML{strs: map[string]string{}} }}

// release gives p back to fastReaders, keeping nothing of what it read:
// its nodes belong to the tree it returned.
func (p *fastYAML) release() {
	clear(p.lines)
	clear(p.vals)
	clear(p.keys)
	clear(p.strs)
	*p = fastYAML{lines: p.lines[:0], vals: p.vals[:0], keys: p.keys[:0], strs: p.strs, buf: p.buf[:0]}
	fastReaders.Put(p)
}

// fastSlab is the most nodes allocated at once: 32 KB, the largest
// allocation the runtime makes from its size classes (a larger one gets
// pages of its own, which cost more peak memory); and how many items or
// keys more are allocated when a group has more than fastSeq counted.
const fastSlab = 256

// node returns a new node from the slab, at line and column col of the
// text.
func (p *fastYAML) node(kind valueKind, line, col int) *node {
	if len(p.slab) == cap(p.slab) {
		size := min(max(p.left, 16), fastSlab)
		p.slab, p.left = make([]node, 0, size), p.left-size
	}
	p.slab = append(p.slab, node{kind: kind, at: newAt(p.file, line+p.lineOff, col), size: 1})
	return &p.slab[len(p.slab)-1]
}

// items sets n's items to the values from mark on, and pops them (once
// reading failed, it only pops them).
func (p *fastYAML) items(n *node, mark int) {
	vals := p.vals[mark:]
	if !p.ok {
		clear(vals)
		p.vals = p.vals[:mark]
		return
	}
	if len(vals) > cap(p.ptrs)-len(p.ptrs) {
		p.ptrs = make([]*node, 0, max(fastSlab, len(vals)))
	}
	at := len(p.ptrs)
	p.ptrs = append(p.ptrs, vals...)
	n.items = p.ptrs[at:len(p.ptrs):len(p.ptrs)]
	for _, v := range vals {
		n.size = addSize(n.size, v.size)
		n.bytes += v.bytes
	}
	clear(vals)
	p.vals = p.vals[:mark]
}

// entries sets n's keys and values to those from kmark and mark on (one
// value a key), and pops them (once reading failed, it only pops them).
func (p *fastYAML) entries(n *node, kmark, mark int) {
	keys := p.keys[kmark:]
	if !p.ok {
		clear(keys)
		p.keys = p.keys[:kmark]
		p.items(n, mark)
		return
	}
	if len(keys) > cap(p.mkeys)-len(p.mkeys) {
		p.mkeys = make([]mkey, 0, max(fastSlab, len(keys)))
	}
	at := len(p.mkeys)
	p.mkeys = append(p.mkeys, keys...)
	n.keys = p.mkeys[at:len(p.mkeys):len(p.mkeys)]
	p.items(n, mark)
	for _, k := range keys {
		n.size = addSize(n.size, 1)
		n.bytes += int64(len(k.str))
	}
	clear(keys)
	p.keys = p.keys[:kmark]
}

// str returns b as a string, shared with the same key read before.
func (p *fastYAML) str(b []byte) string {
	if s, ok := p.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	p.strs[s] = s
	return s
}

// fastSeq reads src, a block list whose items start at column indent+1,
// into the items the builder makes of yaml.v3's reading of it (the lines
// of file counted from lineOff+1), or reports that it cannot.
func fastSeq(src []byte, indent int, file *string, lineOff int) ([]*node, bool) {
	if !plainText(src) || bytes.ContainsAny(src, "\t\r#'\"\\") {
		return nil, false
	}
	p := fastReaders.Get().(*fastYAML)
	defer p.release()
	p.ok, p.file, p.lineOff = true, file, lineOff
	// Every line holds at most one key and one value, an item's line one
	// more (its mapping), a flow list one a comma more than its line's.
	flow := bytes.Count(src, []byte{','}) + bytes.Count(src, []byte{'['})
	items := 0
	num := 0
	trailing := false
	for len(src) > 0 {
		num++
		line := src
		if j := bytes.IndexByte(src, '\n'); j >= 0 {
			line, src = src[:j], src[j+1:]
		} else {
			src = nil
		}
		ind := 0
		for ind < len(line) && line[ind] == ' ' {
			ind++
		}
		if ind == len(line) {
			if ind > 0 {
				return nil, false // spaces a block scalar might keep
			}
			trailing = true
			continue
		}
		if trailing || line[len(line)-1] == ' ' {
			return nil, false // a blank line before text, or trailing blanks
		}
		if line[ind] == '-' {
			items++
		}
		p.lines = append(p.lines, yline{num: num, ind: ind, text: line[ind:]})
		p.endNL = src != nil
	}
	nodes := len(p.lines) + items + flow + 1
	p.left, p.ptrs, p.mkeys = nodes, make([]*node, 0, nodes), make([]mkey, 0, len(p.lines))
	if len(p.lines) == 0 || p.lines[0].num != 1 || p.lines[0].ind != indent {
		return nil, false
	}
	seq := p.seq(indent)
	if !p.ok || p.i != len(p.lines) {
		return nil, false
	}
	return seq.items, true
}

// seq reads block list items at column ind.
func (p *fastYAML) seq(ind int) *node {
	first := p.lines[p.i]
	n := p.node(kSeq, first.num, ind+1)
	mark := len(p.vals)
	defer p.items(n, mark)
	for p.ok && p.i < len(p.lines) && p.lines[p.i].ind == ind {
		l := p.lines[p.i]
		if len(l.text) < 3 || l.text[0] != '-' || l.text[1] != ' ' || l.text[2] == ' ' {
			p.ok = false
			return nil
		}
		// The item is a mapping whose first key follows the "- ".
		p.lines[p.i] = yline{num: l.num, ind: ind + 2, text: l.text[2:]}
		p.vals = append(p.vals, p.mapping(ind+2))
	}
	if p.i < len(p.lines) && p.lines[p.i].ind > ind {
		p.ok = false
	}
	return n
}

// mapping reads block mapping entries at column ind. A key written twice,
// or more keys than the builder reads without an index, are left to
// yaml.v3 and the builder.
func (p *fastYAML) mapping(ind int) *node {
	first := p.lines[p.i]
	n := p.node(kMap, first.num, ind+1)
	kmark, mark := len(p.keys), len(p.vals)
	defer p.entries(n, kmark, mark)
	for p.ok && p.i < len(p.lines) && p.lines[p.i].ind == ind {
		l := p.lines[p.i]
		k := 0
		for k < len(l.text) && isKeyByte(l.text[k], k == 0) {
			k++
		}
		if k == 0 || k == len(l.text) || l.text[k] != ':' || !plainString(l.text[:k]) || len(p.keys)-kmark == indexFrom {
			p.ok = false
			return nil
		}
		for _, prev := range p.keys[kmark:] {
			if prev.str == string(l.text[:k]) {
				p.ok = false
				return nil
			}
		}
		key := mkey{str: p.str(l.text[:k]), at: newAt(p.file, l.num+p.lineOff, ind+1)}
		rest := l.text[k+1:]
		p.i++
		var val *node
		switch {
		case len(rest) == 0:
			val = p.nested(ind)
		case rest[0] != ' ':
			p.ok = false
			return nil
		default:
			v := 1
			for v < len(rest) && rest[v] == ' ' {
				v++
			}
			val = p.inline(l.num, ind, ind+k+1+v, rest[v:])
		}
		if !p.ok {
			return nil
		}
		p.keys = append(p.keys, key)
		p.vals = append(p.vals, val)
	}
	if p.i < len(p.lines) && p.lines[p.i].ind > ind {
		p.ok = false
	}
	return n
}

// nested reads the block under a key at column ind with nothing after its
// colon: a list or a mapping, more indented.
func (p *fastYAML) nested(ind int) *node {
	if p.i >= len(p.lines) || p.lines[p.i].ind <= ind {
		p.ok = false // an empty value: left to yaml.v3
		return nil
	}
	l := p.lines[p.i]
	if l.text[0] == '-' {
		return p.seq(l.ind)
	}
	return p.mapping(l.ind)
}

// inline reads the value written after a key's colon, at column col
// (0-based) of line num, under a key at column ind.
func (p *fastYAML) inline(num, ind, col int, v []byte) *node {
	switch {
	case len(v) == 1 && (v[0] == '>' || v[0] == '|'):
		return p.block(num, ind, col, v[0])
	case v[0] == '[':
		return p.flow(num, col, v)
	}
	if p.i < len(p.lines) && p.lines[p.i].ind > ind {
		p.ok = false // a plain scalar that goes on: left to yaml.v3
		return nil
	}
	if bytes.Contains(v, []byte(": ")) || v[len(v)-1] == ':' {
		p.ok = false
		return nil
	}
	return p.scalar(num, col, v)
}

// scalar is a plain scalar whose type is certain: a string, a boolean, a
// null, a plain integer or a plain decimal fraction, as the builder reads
// it.
func (p *fastYAML) scalar(num, col int, v []byte) *node {
	n := p.node(kString, num, col+1)
	n.yscal = true
	n.bytes = int64(len(v))
	switch {
	case plainString(v):
		n.str = string(v)
	case plainInt(v):
		i, _ := strconv.ParseInt(string(v), 10, 64)
		n.kind, n.num, n.str = kInt, float64(i), string(v)
	case plainFloat(v):
		f, _ := strconv.ParseFloat(string(v), 64)
		n.kind, n.num, n.str = kFloat, f, strconv.FormatFloat(f, 'g', -1, 64)
		if n.str != string(v) {
			n.raw = string(v)
		}
	default:
		switch string(v) {
		case "true", "True", "TRUE":
			n.kind, n.b = kBool, true
		case "false", "False", "FALSE":
			n.kind = kBool
		case "null", "Null", "NULL", "~":
			n.kind = kNull
		default:
			p.ok = false
			return nil
		}
		n.str = p.str(v)
	}
	return n
}

// block reads a folded or literal block scalar with the default chomping,
// whose lines are all indented alike.
func (p *fastYAML) block(num, ind, col int, style byte) *node {
	if p.i >= len(p.lines) || p.lines[p.i].ind <= ind {
		p.ok = false
		return nil
	}
	in := p.lines[p.i].ind
	b := p.buf[:0]
	for p.i < len(p.lines) && p.lines[p.i].ind > ind {
		l := p.lines[p.i]
		if l.ind != in {
			p.ok = false
			return nil
		}
		if len(b) > 0 {
			if style == '>' {
				b = append(b, ' ')
			} else {
				b = append(b, '\n')
			}
		}
		b = append(b, l.text...)
		p.i++
	}
	if p.i < len(p.lines) || p.endNL {
		b = append(b, '\n') // the default chomping keeps the last line break
	}
	p.buf = b
	n := p.node(kString, num, col+1)
	n.str, n.bytes, n.yscal = string(b), int64(len(b)), true
	if style == '>' {
		n.style = uint8(Folded)
	} else {
		n.style = uint8(Literal)
	}
	return n
}

// flow reads a one-line flow list of simple words at column col of line
// num.
func (p *fastYAML) flow(num, col int, v []byte) *node {
	if v[len(v)-1] != ']' {
		p.ok = false
		return nil
	}
	n := p.node(kSeq, num, col+1)
	mark := len(p.vals)
	defer p.items(n, mark)
	inner := v[1 : len(v)-1]
	if len(bytes.TrimLeft(inner, " ")) == 0 {
		if len(inner) > 0 {
			p.ok = false
		}
		return n
	}
	at := col + 1
	for _, part := range bytes.Split(inner, []byte{','}) {
		lead := 0
		for lead < len(part) && part[lead] == ' ' {
			lead++
		}
		word := bytes.TrimRight(part[lead:], " ")
		for _, c := range word {
			if !isWordByte(c) {
				p.ok = false
				return nil
			}
		}
		if len(word) == 0 || (at > col+1 && lead == 0) {
			p.ok = false
			return nil
		}
		item := p.scalar(num, at+lead, word)
		if !p.ok {
			return nil
		}
		p.vals = append(p.vals, item)
		at += len(part) + 1
	}
	return n
}

// isKeyByte: a simple key is a letter or underscore, then letters, digits
// and underscores.
func isKeyByte(c byte, first bool) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || !first && c >= '0' && c <= '9'
}

// isWordByte: a flow list item is made of these.
func isWordByte(c byte) bool {
	return isKeyByte(c, false) || c == '-' || c == '.' || c == '/'
}

// plainString reports whether yaml.v3 resolves the plain scalar v to a
// string for certain: it starts with a letter and is not a boolean or
// null.
func plainString(v []byte) bool {
	if len(v) == 0 || !(v[0] >= 'a' && v[0] <= 'z' || v[0] >= 'A' && v[0] <= 'Z') {
		return false
	}
	switch string(v) {
	case "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL":
		return false
	}
	return true
}

// plainInt reports whether v is a decimal integer yaml.v3 resolves to an
// int: no sign, no leading zero, at most 18 digits.
func plainInt(v []byte) bool {
	return len(v) > 0 && len(v) <= 18 && (v[0] != '0' || len(v) == 1) && digits(v)
}

// plainFloat reports whether v is a decimal fraction yaml.v3 resolves to a
// float: digits, a point, digits, no sign and no exponent.
func plainFloat(v []byte) bool {
	i := bytes.IndexByte(v, '.')
	return i > 0 && i < len(v)-1 && len(v) <= 18 && digits(v[:i]) && digits(v[i+1:])
}

func digits(v []byte) bool {
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// plainText reports whether src is UTF-8 of printable characters and line
// feeds only, none of which YAML reads as a line break or a byte order
// mark.
func plainText(src []byte) bool {
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		switch {
		case r == utf8.RuneError && size <= 1, r <= 0x9f, r == 0x2028, r == 0x2029, r == 0xfeff, r >= 0xfffe && r <= 0xffff:
			return false
		}
		i += size
	}
	return true
}
