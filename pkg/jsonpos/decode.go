package jsonpos

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Decode parses src (see Parse) and decodes it into v as json.Unmarshal
// does, but strictly unless o.AllowUnknownFields: an object key that names
// no field of the struct it decodes into is an *Error at the key
// (ErrUnknownField). A value of the wrong type is an *Error at the value
// (ErrType, wrapping encoding/json's *json.UnmarshalTypeError) with its
// path and "want a number, got string". It returns the tree for
// positioning later checks.
func Decode(src []byte, v any, o Options) (*Node, error) {
	root, err := Parse(src, o)
	if err != nil {
		return nil, err
	}
	return root, DecodeNode(src, root, v, o)
}

// DecodeNode decodes the value n, parsed from src, into v as Decode does;
// offsets are in src and paths start at n. Every error is an *Error.
func DecodeNode(src []byte, n *Node, v any, o Options) error {
	if !o.AllowUnknownFields {
		if err := unknownField(n, reflect.TypeOf(v), ""); err != nil {
			return err
		}
	}
	err := json.Unmarshal(n.Raw(src), v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te):
		// encoding/json's offset is just past a scalar, or just past the
		// '{' or '[' of a container: the byte before it is in the value.
		at, path := n.At(n.Off + max(0, int(te.Offset)-1))
		return &Error{Off: at.Off, Path: path, Msg: fmt.Sprintf("want %s, got %s", TypeName(te.Type), te.Value), Err: fmt.Errorf("%w: %w", ErrType, err)}
	}
	return &Error{Off: n.Off, Msg: err.Error(), Err: err}
}

// TypeName names the JSON a Go type decodes from: "an object", "a list",
// "a number", "a string", "a boolean".
func TypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	}
	return t.String()
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// unknownField finds the first object key under n that names no field of
// the struct type t decodes it into, following t through pointers, maps,
// slices and arrays. Types that decode themselves and interfaces accept
// anything.
func unknownField(n *Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == Object:
		fields := structFields(t)
		for _, m := range n.Members {
			f, ok := fields[m.Key]
			if !ok {
				f, ok = foldField(fields, m.Key)
			}
			if !ok {
				return &Error{Off: m.Off, Path: path, Msg: fmt.Sprintf("unknown field %q", m.Key), Err: ErrUnknownField}
			}
			if err := unknownField(m.Value, f, Join(path, m.Key)); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Map && n.Kind == Object:
		for _, m := range n.Members {
			if err := unknownField(m.Value, t.Elem(), Join(path, m.Key)); err != nil {
				return err
			}
		}
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && n.Kind == Array:
		for i, e := range n.Elems {
			if err := unknownField(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// structFields maps the JSON names of t's fields (embedded structs'
// included) to their types.
func structFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || (f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("json") == "") {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && f.Tag.Get("json") == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := out[name]; !dup {
			out[name] = f.Type
		}
	}
	return out
}

// foldField matches key to a field name case-insensitively, as
// encoding/json does.
func foldField(fields map[string]reflect.Type, key string) (reflect.Type, bool) {
	for name, t := range fields {
		if strings.EqualFold(name, key) {
			return t, true
		}
	}
	return nil, false
}
