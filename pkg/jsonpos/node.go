package jsonpos

import (
	"fmt"
	"strconv"
)

// Kind is the type of a JSON value.
type Kind int

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// String names the kind with its article, for messages: "a string".
func (k Kind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// Node is one JSON value and the bytes it came from: src[Off:End].
type Node struct {
	Kind Kind
	Off  int
	End  int
	// Text is a string's value or a number's literal text.
	Text string
	// Bool is a boolean's value.
	Bool bool
	// Members are an object's members in source order, duplicates
	// included; Elems are an array's elements. Both are empty for a value
	// nested deeper than Options.BuildDepth.
	Members []Member
	Elems   []*Node
}

// Member is one key of an object with its value.
type Member struct {
	Key   string
	Off   int // offset of the key's opening quote
	Value *Node
}

// Get returns the member of object n named key (the last one when the key
// is repeated), or nil.
func (n *Node) Get(key string) *Member {
	if n == nil {
		return nil
	}
	for i := len(n.Members) - 1; i >= 0; i-- {
		if n.Members[i].Key == key {
			return &n.Members[i]
		}
	}
	return nil
}

// Raw returns the bytes of n in src, the text n was parsed from.
func (n *Node) Raw(src []byte) []byte { return src[n.Off:n.End] }

// Short describes n for a message: its kind, and for a scalar its value
// (strings cut at 40 bytes): `a string "high"`, "a number 5", "an object".
func (n *Node) Short() string {
	switch n.Kind {
	case String:
		s := n.Text
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return n.Kind.String() + " " + strconv.Quote(s)
	case Number:
		return n.Kind.String() + " " + n.Text
	case Bool:
		return n.Kind.String() + " " + strconv.FormatBool(n.Bool)
	}
	return n.Kind.String()
}

// At returns the innermost node whose bytes contain offset off, with its
// path from n ("plugins[0].id"; "" for n itself). It returns n when no
// child contains off.
func (n *Node) At(off int) (*Node, string) {
	path := ""
	cur := n
	for {
		next := (*Node)(nil)
		for _, m := range cur.Members {
			if m.Off <= off && off < m.Value.End {
				next, path = m.Value, Join(path, m.Key)
				break
			}
		}
		for i, e := range cur.Elems {
			if e.Off <= off && off < e.End {
				next, path = e, fmt.Sprintf("%s[%d]", path, i)
				break
			}
		}
		if next == nil {
			return cur, path
		}
		cur = next
	}
}

// Join appends key to a dotted path.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
