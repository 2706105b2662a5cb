package pack

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/assay-eval/assay/pkg/diag"
)

// valueKind is the JSON type of a node.
type valueKind uint8

const (
	kNull valueKind = iota
	kBool
	kInt
	kFloat
	kString
	kSeq
	kMap
)

func (k valueKind) String() string {
	return [...]string{"null", "a boolean", "an integer", "a number", "a string", "a list", "a mapping"}[k]
}

// node is a YAML value with aliases and merge keys resolved, typed as JSON
// and keeping the position of its source. Nodes reached through an alias are
// shared, so the tree is a DAG whose expanded size is bounded by the builder.
type node struct {
	at    at
	str   string         // scalars: the value (numbers: normalised; else as written)
	raw   string         // scalars whose value as written is not str: as written
	num   float64        // kInt, kFloat
	items []*node        // kSeq: the items; kMap: the values, in the order of keys
	keys  []mkey         // kMap: the keys, in source order
	index map[string]int // kMap with more than indexFrom keys: key -> position in keys
	bytes int64          // bytes of scalars and keys once aliases are expanded
	size  int32          // number of nodes once aliases are expanded
	kind  valueKind
	style uint8 // scalars: how the value was written, a ScalarStyle (one byte: a pack's tasks have many nodes)
	yscal bool  // the source is a YAML scalar (not a list, a mapping or an empty document)
	b     bool  // kBool
}

// value is a scalar's value as written.
func (n *node) value() string {
	if n.raw != "" {
		return n.raw
	}
	return n.str
}

// mkey is a mapping key: always a string.
type mkey struct {
	str string
	at  at
}

// at is where a node or key starts: a pointer to its file's name (one for
// the tree), its line and column; a pack's tasks have many nodes, and a
// diag.Pos is twice the size.
type at struct {
	file      *string
	line, col int32
}

func newAt(file *string, line, col int) at {
	return at{file: file, line: int32(line), col: int32(col)}
}

func (a at) pos() diag.Pos { return diag.Pos{File: *a.file, Line: int(a.line), Col: int(a.col)} }

// pos is where the node starts.
func (n *node) pos() diag.Pos { return n.at.pos() }

// pos is where the key starts.
func (k *mkey) pos() diag.Pos { return k.at.pos() }

// indexFrom is the number of keys above which a mapping keeps an index, so
// that a hostile pack with many keys costs linear, not quadratic, time.
const indexFrom = 16

// get returns the key and value nodes for key k of a mapping.
func (n *node) get(k string) (key *mkey, val *node) {
	if n.index != nil {
		if i, ok := n.index[k]; ok {
			return &n.keys[i], n.items[i]
		}
		return nil, nil
	}
	for i := range n.keys {
		if n.keys[i].str == k {
			return &n.keys[i], n.items[i]
		}
	}
	return nil, nil
}

// put appends key k with value v to a mapping, indexing it once the
// mapping has more than indexFrom keys.
func (n *node) put(k mkey, v *node) {
	n.keys = append(n.keys, k)
	n.items = append(n.items, v)
	switch {
	case n.index != nil:
		n.index[k.str] = len(n.keys) - 1
	case len(n.keys) > indexFrom:
		n.index = make(map[string]int, 2*len(n.keys))
		for i, key := range n.keys {
			n.index[key.str] = i
		}
	}
}

// describe names the node's type and, for scalars, its value.
func (n *node) describe() string {
	switch n.kind {
	case kSeq, kMap, kNull:
		return n.kind.String()
	case kString:
		return fmt.Sprintf("a string %q", clip(n.str))
	}
	return fmt.Sprintf("%s %s", n.kind, n.str)
}

func clip(s string) string {
	const max = 40
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "..."
	}
	return s
}

// builder turns a yaml.Node document into a node tree, reporting duplicate
// keys, non-scalar keys, values JSON cannot hold, and alias abuse.
type builder struct {
	file     *string // the file's name, shared by the nodes' positions
	diags    *collector
	memo     map[*yaml.Node]*node
	building map[*yaml.Node]bool
	aliases  int
	expanded int32
	addBytes int64 // bytes the aliases add once expanded
	stopped  bool  // the alias budget was exceeded; the tree is unusable
	lineOff  int   // added to every line: the line before the parsed text's first
	anchored bool  // an anchor or alias was seen
}

func newBuilder(file string, c *collector) *builder {
	return &builder{file: &file, diags: c, memo: map[*yaml.Node]*node{}, building: map[*yaml.Node]bool{}}
}

func (b *builder) pos(y *yaml.Node) diag.Pos {
	return b.at(y).pos()
}

func (b *builder) at(y *yaml.Node) at {
	return newAt(b.file, y.Line+b.lineOff, y.Column)
}

func (b *builder) build(y *yaml.Node) *node {
	if b.stopped {
		return b.null(y)
	}
	switch y.Kind {
	case yaml.DocumentNode:
		if len(y.Content) == 0 {
			return b.null(y)
		}
		return b.build(y.Content[0])
	case yaml.AliasNode:
		b.anchored = true
		return b.alias(y)
	}
	if y.Anchor != "" {
		b.anchored = true
		if n, ok := b.memo[y]; ok {
			return n
		}
		b.building[y] = true
		defer delete(b.building, y)
	}
	var n *node
	switch y.Kind {
	case yaml.SequenceNode:
		n = &node{kind: kSeq, at: b.at(y), size: 1, items: make([]*node, 0, len(y.Content))}
		for _, c := range y.Content {
			item := b.build(c)
			n.items = append(n.items, item)
			n.size = addSize(n.size, item.size)
			n.bytes += item.bytes
		}
	case yaml.MappingNode:
		n = b.mapping(y)
	default:
		n = b.scalar(y)
	}
	if y.Anchor != "" {
		b.memo[y] = n
	}
	return n
}

// null is the stand-in for a value that could not be built, or the empty
// document: no value, but y's style and value as written.
func (b *builder) null(y *yaml.Node) *node {
	return &node{kind: kNull, at: b.at(y), size: 1, raw: y.Value, yscal: y.Kind == yaml.ScalarNode, style: uint8(styleOf(y))}
}

func addSize(a, b int32) int32 {
	if s := int64(a) + int64(b); s <= math.MaxInt32 {
		return int32(s)
	}
	return math.MaxInt32
}

func (b *builder) alias(y *yaml.Node) *node {
	t := y.Alias
	if t == nil {
		b.diags.add(diag.Errorf(b.pos(y), CodeSyntax, "alias *%s refers to no anchor", y.Value), "")
		return b.null(y)
	}
	if b.building[t] {
		b.diags.add(diag.Errorf(b.pos(y), CodeSyntax, "alias *%s refers to a value that contains it", y.Value), "")
		return b.null(y)
	}
	n := b.build(t)
	b.aliases++
	b.expanded = addSize(b.expanded, n.size)
	b.addBytes += n.bytes
	switch {
	case b.stopped:
	case b.aliases > maxAliases || b.expanded > maxAliasNodes:
		b.stopped = true
		b.diags.add(diag.Errorf(b.pos(y), CodeAlias,
			"aliases expand to more than %d values (or %d aliases); refusing a possible alias bomb",
			maxAliasNodes, maxAliases), "")
	case b.addBytes > MaxAliasBytes:
		b.stopped = true
		b.diags.add(diag.Errorf(b.pos(y), CodeAlias,
			"aliases expand the pack by more than %d MiB of text (this alias *%s adds %d bytes, %d aliases so far); refusing a possible alias bomb",
			MaxAliasBytes>>20, y.Value, n.bytes, b.aliases), "")
	}
	return n
}

func (b *builder) mapping(y *yaml.Node) *node {
	pairs := len(y.Content) / 2
	n := &node{kind: kMap, at: b.at(y), size: 1, keys: make([]mkey, 0, pairs), items: make([]*node, 0, pairs)}
	var merges []*yaml.Node
	for i := 0; i+1 < len(y.Content); i += 2 {
		ky, vy := y.Content[i], y.Content[i+1]
		if ky.Kind == yaml.ScalarNode && ky.ShortTag() == "!!merge" {
			merges = append(merges, vy)
			continue
		}
		k, ok := b.key(ky)
		if !ok {
			continue
		}
		if prev, _ := n.get(k.str); prev != nil {
			b.diags.add(diag.Errorf(k.pos(), CodeDuplicateKey, "key %q is already defined at line %d", clip(k.str), prev.pos().Line), "")
			continue
		}
		v := b.build(vy)
		n.put(k, v)
		n.size = addSize(n.size, 1+v.size)
		n.bytes += int64(len(k.str)) + v.bytes
	}
	// Merge keys (<<: *base): keys written in the mapping win; among merged
	// mappings the first one wins.
	for _, m := range merges {
		var sources []*node
		src := b.build(m)
		switch src.kind {
		case kMap:
			sources = append(sources, src)
		case kSeq:
			for _, it := range src.items {
				if it.kind != kMap {
					b.diags.add(diag.Errorf(it.pos(), CodeType, "a merge key (<<) takes mappings, got %s", it.describe()), "")
					continue
				}
				sources = append(sources, it)
			}
		default:
			b.diags.add(diag.Errorf(src.pos(), CodeType, "a merge key (<<) takes a mapping or a list of mappings, got %s", src.describe()), "")
		}
		for _, s := range sources {
			for i, k := range s.keys {
				if prev, _ := n.get(k.str); prev != nil {
					continue
				}
				n.put(k, s.items[i])
				n.size = addSize(n.size, 1+s.items[i].size)
				n.bytes += int64(len(k.str)) + s.items[i].bytes
			}
		}
	}
	return n
}

// key builds a mapping key, which must be a scalar; it is always a string.
func (b *builder) key(y *yaml.Node) (mkey, bool) {
	if y.Kind == yaml.AliasNode {
		b.anchored = true
		if y.Alias != nil {
			y = y.Alias
		}
	}
	if y.Kind != yaml.ScalarNode {
		b.diags.add(diag.Errorf(b.pos(y), CodeType, "a mapping key must be a plain string, not a %s", yamlKind(y)), "")
		return mkey{}, false
	}
	return mkey{str: y.Value, at: b.at(y)}, true
}

func yamlKind(y *yaml.Node) string {
	switch y.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	}
	return "value"
}

func (b *builder) scalar(y *yaml.Node) *node {
	n := &node{kind: kString, at: b.at(y), str: y.Value, size: 1, bytes: int64(len(y.Value)), yscal: true, style: uint8(styleOf(y))}
	switch y.ShortTag() {
	case "!!null":
		n.kind = kNull
	case "!!bool":
		n.kind = kBool
		switch strings.ToLower(y.Value) {
		case "true":
			n.b = true
		case "false":
		default:
			b.diags.add(diag.Errorf(n.pos(), CodeType, "%q is not a boolean", y.Value), "")
			n.kind = kString
		}
	case "!!int":
		s := strings.ReplaceAll(y.Value, "_", "")
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			n.kind, n.num, n.str = kInt, float64(i), strconv.FormatInt(i, 10)
		} else if u, err := strconv.ParseUint(strings.TrimPrefix(s, "+"), 0, 64); err == nil {
			n.kind, n.num, n.str = kInt, float64(u), strconv.FormatUint(u, 10)
		} else if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) {
			n.kind, n.num, n.str = kInt, f, strconv.FormatFloat(f, 'f', -1, 64)
		} else {
			b.diags.add(diag.Errorf(n.pos(), CodeType, "%q is not an integer JSON can hold", clip(y.Value)), "")
		}
	case "!!float":
		f, err := strconv.ParseFloat(strings.ReplaceAll(y.Value, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			b.diags.add(diag.Errorf(n.pos(), CodeType, "%q is not a finite number", clip(y.Value)), "")
			break
		}
		n.kind, n.num, n.str = kFloat, f, strconv.FormatFloat(f, 'g', -1, 64)
	}
	if n.str != y.Value {
		n.raw = y.Value
	}
	return n
}

// jsonValue renders the node as a JSON value: numbers as json.Number when
// exact is set (for schema validation), else as float64.
func (n *node) jsonValue(exact bool) any {
	switch n.kind {
	case kBool:
		return n.b
	case kInt, kFloat:
		if exact {
			return json.Number(n.str)
		}
		return n.num
	case kString:
		return n.str
	case kSeq:
		out := make([]any, len(n.items))
		for i, it := range n.items {
			out[i] = it.jsonValue(exact)
		}
		return out
	case kMap:
		out := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			out[k.str] = n.items[i].jsonValue(exact)
		}
		return out
	}
	return nil
}
