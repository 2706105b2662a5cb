package jsonpos

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzParse checks Parse against encoding/json, and that Decode fails only
// with an *Error inside the text: it accepts exactly the
// valid texts (nesting aside), every error lies inside the text, and every
// node's bytes are themselves valid JSON of its kind.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"a": [1, "x", {"b": null}], "c": true}`))
	f.Add([]byte(`{"a": 1,}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		var m manifest
		if _, err := Decode(src, &m, Options{}); err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Off < 0 || e.Off > len(src) {
				t.Fatalf("Decode(%q) = %v, want an *Error inside the text", src, err)
			}
		}
		root, err := Parse(src, Options{})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Off < 0 || e.Off > len(src) {
				t.Fatalf("Parse(%q) = %v, want an *Error inside the text", src, err)
			}
			if errors.Is(err, ErrSyntax) && json.Valid(src) {
				t.Errorf("Parse(%q) = %v, but encoding/json accepts it", src, err)
			}
			return
		}
		if !json.Valid(src) {
			t.Fatalf("Parse(%q) accepted what encoding/json rejects", src)
		}
		var walk func(n *Node)
		walk = func(n *Node) {
			if n.Off < 0 || n.End > len(src) || n.Off >= n.End || !json.Valid(n.Raw(src)) {
				t.Fatalf("Parse(%q): node [%d,%d) is not a JSON value", src, n.Off, n.End)
			}
			if got, _ := n.At(n.Off); got != n {
				t.Fatalf("Parse(%q): At(%d) is not the node starting there", src, n.Off)
			}
			for _, m := range n.Members {
				walk(m.Value)
			}
			for _, e := range n.Elems {
				walk(e)
			}
		}
		walk(root)
		Source{File: "f.json", Src: src}.Pos(root.End)
	})
}
