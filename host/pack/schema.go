package pack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/assay-eval/assay/packs"
	"github.com/assay-eval/assay/pkg/jsonpos"
)

// Schema is a compiled pack JSON schema together with the scorer enum it
// carries.
type Schema struct {
	source   string // the file path, or "embedded"
	compiled *jsonschema.Schema
	scorers  []string // sorted
	// split is the schema cut in two for reading a pack task by task, or
	// nil when the schema's shape does not allow it (see splitSchema).
	split *schemaSplit
	// fast is the fast checker for compiled, or nil (fastschema.go).
	fast *fastSchema
}

// embeddedSource is what Source returns for the embedded schema.
const embeddedSource = "embedded"

var embedded = sync.OnceValue(func() *Schema {
	s, err := compileSchema(embeddedSource, packs.Schema())
	if err != nil {
		// The embedded schema is part of the binary and tested; it compiles.
		panic(fmt.Sprintf("compiling the embedded pack schema: %v", err))
	}
	return s
})

// EmbeddedSchema returns the schema compiled into the binary
// (packs/schema/company_eval_pack.v1.json).
func EmbeddedSchema() *Schema { return embedded() }

// LoadSchema reads and compiles the pack schema at path.
func LoadSchema(path string) (*Schema, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading pack schema: %w", err)
	}
	s, err := compileSchema(path, src)
	if err != nil {
		return nil, fmt.Errorf("loading pack schema %s: %w", path, err)
	}
	return s, nil
}

// ScorerEnum returns the scorer IDs the schema allows, sorted.
func (s *Schema) ScorerEnum() []string { return slices.Clone(s.scorers) }

// Source is the schema's file path, or "embedded".
func (s *Schema) Source() string { return s.source }

func (s *Schema) allowsScorer(id string) bool {
	_, ok := slices.BinarySearch(s.scorers, id)
	return ok
}

func compileSchema(source string, src []byte) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("parsing JSON: %w", err)
	}
	ptr, err := scorerEnumPointer(doc)
	if err != nil {
		return nil, err
	}
	enum, err := scorerEnum(doc, ptr)
	if err != nil {
		return nil, err
	}
	// Each schema gets its own compiler, so one fixed URL serves them all.
	const url = "mem:///company_eval_pack.json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("adding schema resource: %w", err)
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compiling: %w", err)
	}
	return &Schema{source: source, compiled: compiled, scorers: enum, split: splitSchema(c, url, doc), fast: compileFast(compiled)}, nil
}

// scorerEnumPointer finds where the scorer enum lives: the "enum" of the
// schema of tasks[].scorer, following local $refs.
func scorerEnumPointer(doc any) ([]string, error) {
	path := []string{}
	cur := doc
	for _, step := range [][]string{{"properties", "tasks"}, {"items"}, {"properties", "scorer"}} {
		var err error
		if cur, path, err = derefLocal(doc, cur, path); err != nil {
			return nil, err
		}
		for _, k := range step {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, errScorerEnum
			}
			if cur, ok = m[k]; !ok {
				return nil, errScorerEnum
			}
			path = append(path, k)
		}
	}
	cur, path, err := derefLocal(doc, cur, path)
	if err != nil {
		return nil, err
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, errScorerEnum
	}
	if _, ok := m["enum"].([]any); !ok {
		return nil, errScorerEnum
	}
	return append(path, "enum"), nil
}

var errScorerEnum = errors.New("finding the scorer enum: the schema has no enum for tasks[].scorer")

// derefLocal follows "$ref": "#/..." until v is not a reference.
func derefLocal(doc, v any, path []string) (any, []string, error) {
	for range 32 {
		m, ok := v.(map[string]any)
		if !ok {
			return v, path, nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return v, path, nil
		}
		if !strings.HasPrefix(ref, "#/") {
			return nil, nil, fmt.Errorf("finding the scorer enum: only local $refs are followed, got %q", ref)
		}
		path = nil
		v = doc
		for _, tok := range strings.Split(ref[2:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			m, ok := v.(map[string]any)
			if !ok {
				return nil, nil, fmt.Errorf("finding the scorer enum: $ref %q does not resolve", ref)
			}
			if v, ok = m[tok]; !ok {
				return nil, nil, fmt.Errorf("finding the scorer enum: $ref %q does not resolve", ref)
			}
			path = append(path, tok)
		}
	}
	return nil, nil, errors.New("finding the scorer enum: $ref chain too long")
}

func scorerEnum(doc any, ptr []string) ([]string, error) {
	v := doc
	for _, k := range ptr {
		v = v.(map[string]any)[k]
	}
	var ids []string
	for _, e := range v.([]any) {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("reading the scorer enum: %v is not a string", e)
		}
		ids = append(ids, s)
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// RewriteScorerEnum replaces the scorer enum in the schema file at path with
// ids (sorted, deduplicated), leaving the rest of the file as written. The
// result must still compile; the file is replaced atomically.
func RewriteScorerEnum(path string, ids []string) error {
	if len(ids) == 0 {
		return errors.New("rewriting the scorer enum: no scorer ids")
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("rewriting the scorer enum: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		return fmt.Errorf("rewriting the scorer enum: parsing %s: %w", path, err)
	}
	ptr, err := scorerEnumPointer(doc)
	if err != nil {
		return fmt.Errorf("rewriting the scorer enum in %s: %w", path, err)
	}
	start, end, err := jsonSpan(src, ptr)
	if err != nil {
		return fmt.Errorf("rewriting the scorer enum in %s: %w", path, err)
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	var enum bytes.Buffer
	enum.WriteByte('[')
	for i, id := range sorted {
		if i > 0 {
			enum.WriteString(", ")
		}
		q, _ := json.Marshal(id)
		enum.Write(q)
	}
	enum.WriteByte(']')
	out := slices.Concat(src[:start], enum.Bytes(), src[end:])
	if _, err := compileSchema(path, out); err != nil {
		return fmt.Errorf("rewriting the scorer enum in %s: the result does not compile: %w", path, err)
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".schema-*.json")
	if err != nil {
		return fmt.Errorf("rewriting the scorer enum: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return fmt.Errorf("rewriting the scorer enum: writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("rewriting the scorer enum: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("rewriting the scorer enum: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rewriting the scorer enum: %w", err)
	}
	return nil
}

// jsonSpan returns the byte range of the value at ptr in the JSON text src.
func jsonSpan(src []byte, ptr []string) (start, end int, err error) {
	n, err := jsonpos.Parse(src, jsonpos.Options{})
	if err != nil {
		return 0, 0, fmt.Errorf("scanning JSON: %w", err)
	}
	for _, step := range ptr {
		var next *jsonpos.Node
		switch n.Kind {
		case jsonpos.Object:
			if m := n.Get(step); m != nil {
				next = m.Value
			}
		case jsonpos.Array:
			if i, err := strconv.Atoi(step); err == nil && i >= 0 && i < len(n.Elems) {
				next = n.Elems[i]
			}
		}
		if next == nil {
			return 0, 0, fmt.Errorf("no value at /%s", strings.Join(ptr, "/"))
		}
		n = next
	}
	return n.Off, n.End, nil
}
