package pack

import (
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// fastCase is a schema and its fast checker.
type fastCase struct {
	name string
	s    *jsonschema.Schema
	f    *fastSchema
}

// fastCases are the embedded schema's task schema (and its root schema
// should that get a fast checker) and the small
// schemas of fastSchemas, with their fast checkers.
func fastCases(t testing.TB) []fastCase {
	t.Helper()
	emb := EmbeddedSchema()
	if emb.split == nil || emb.split.fastItem == nil {
		t.Fatal("the embedded task schema has no fast checker: every task goes through the JSON schema library")
	}
	cases := []fastCase{{"embedded task", emb.split.item, emb.split.fastItem}}
	if emb.fast != nil {
		cases = append(cases, fastCase{"embedded", emb.compiled, emb.fast})
	}
	for name, src := range fastSchemas {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.AddResource("mem:///s.json", doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s, err := c.Compile("mem:///s.json")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		f := compileFast(s)
		if f == nil {
			t.Fatalf("%s: no fast checker", name)
		}
		cases = append(cases, fastCase{name, s, f})
	}
	return cases
}

// fastSchemas are schemas with the keywords the fast checker knows, in
// combinations the embedded schema does not have.
var fastSchemas = map[string]string{
	"integer bounds": `{"type": "object", "properties": {"n": {"type": "integer", "minimum": -3, "maximum": 1e3, "exclusiveMaximum": 999.5}},
		"additionalProperties": {"type": ["string", "null"], "maxLength": 3}}`,
	"int64 bounds": `{"properties": {"n": {"minimum": -3, "maximum": 1000, "exclusiveMinimum": -4, "exclusiveMaximum": 999},
		"x": {"exclusiveMinimum": 0, "maximum": 9223372036854775807}}}`,
	"fraction bounds": `{"properties": {"x": {"exclusiveMinimum": 0.1, "maximum": 0.30000000000000004}}, "additionalProperties": false}`,
	"lists":           `{"type": "array", "minItems": 1, "maxItems": 3, "items": {"enum": ["a", 1, null, "é"]}}`,
	"unique":          `{"type": "array", "uniqueItems": true, "items": {"const": "a", "type": "string"}}`,
	"unique any":      `{"uniqueItems": true, "additionalProperties": {"uniqueItems": true}}`,
	"false schemas":   `{"properties": {"x": false, "y": true, "z": {"$ref": "#/$defs/z"}}, "$defs": {"z": {"$ref": "#/$defs/w"}, "w": {"type": "boolean"}}}`,
	"ref loop":        `{"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}`,
	"recursive":       `{"type": ["object", "array", "string"], "pattern": "^[a-z]*$", "additionalProperties": {"$ref": "#"}, "items": {"$ref": "#"}, "required": ["k"]}`,
}

// TestFastSchemaUnknownKeywords checks that a schema with a keyword the fast
// checker does not know gets no fast checker.
func TestFastSchemaUnknownKeywords(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		`{"properties": {"x": {"anyOf": [{"type": "string"}]}}}`,
		`{"items": {"contains": true}}`,
		`{"properties": {"x": {"format": "email"}}}`,
		`{"multipleOf": 2}`,
		`{"const": 1}`,
		`{"items": {"const": {"a": 1}}}`,
		`{"patternProperties": {"^x": true}}`,
		`{"$schema": "http://json-schema.org/draft-07/schema#", "items": {"type": "string"}}`,
	} {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource("mem:///s.json", doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile("mem:///s.json")
		if err != nil {
			t.Fatal(err)
		}
		if f := compileFast(s); f != nil {
			t.Errorf("compileFast(%s) = a checker, want nil", src)
		}
	}
}

// fastValues are YAML values that probe each keyword, valid and not.
var fastValues = []string{
	"x", "1", "-3", "-4", "999", "999.5", "1000", "1.0", "1e3", "0x10", "0o7", "1_000", "0.1", "0.30000000000000004", "0.3",
	"0.30000000000000005", "9223372036854775807", "18446744073709551616", "1e400", ".inf", "-.nan", "~", "null", "true", "'true'",
	"''", "abc", "abcd", "é", "ééé", "éééé", "[]", "[a]", "[a, 1, ~, é]", "[a, b, c, d]", "[a, a]", "[a, 'a']", "[1, 1.0]", "[a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, a]", "[a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r]", "{k: [x, y, x]}", "[[a]]", "[1.0]", "{}",
	"{k: x}", "{k: [a, {k: b}]}", "{k: A}", "{n: 5}", "{n: 5.0}", "{n: -3}", "{n: 999}", "{n: 999.5}", "{n: x}", "{n: 1, o: abc}", "{n: -4}", "{n: 998}", "{n: 1000}", "{n: 0}", "{x: 0}", "{x: 1}", "{x: -1}", "{x: 9223372036854775807}", "{x: 9223372036854775808}",
	"{n: 1, o: abcd}", "{o: ~}", "{o: 1}", "{x: 0.2}", "{x: 0.1}", "{x: 0.3}", "{x: 0.30000000000000004}", "{x: 1e-1}", "{x: 2}",
	"{y: 1}", "{z: true}", "{z: 1}", "{x: ~}", "{k: {k: {k: ~}}}",
	"{label: t, persona: p, prompt: x, scorer: answer_keywords}",
	"{label: t, persona: p, prompt: x, scorer: answer_keywords, weight: 0}",
	"{label: t, persona: p, prompt: x, scorer: answer_keywords, weight: 0.0001, safety: {max_tool_calls: 2.0}}",
	"{label: t, persona: p, prompt: x, scorer: answer_keywords, safety: {max_tool_calls: 2, requires_human: 'no'}}",
	"{label: -t, persona: p, prompt: x, scorer: answer_keywords}",
	"{label: t, persona: '', prompt: x, scorer: answer_keywords}",
	"{label: t, persona: p, prompt: x, scorer: nope, extra: 1}",
	"{label: t, persona: p, prompt: x, scorer: answer_keywords, cel: [{name: c, expr: x, weight: -0.0, failure_tag: ab_c}]}",
	"{label: t, persona: p, prompt: x, scorer: answer_keywords, cel: [{name: c, expr: x, failure_tag: Ab}]}",
	"{label: t, persona: p, prompt: x, scorer: answer_keywords, cel: [{name: 1c, expr: x}], slice_tags: [a, '']}",
	"{label: t, persona: p, prompt: x, scorer: answer_keywords, kpis: [x], tool_catalog: [a]}",
}

// TestFastSchemaSound checks the fast checker is never wrong when it says
// valid: for every value of every pack in the corpus, every node of them
// and the values above, against every schema of fastCases. It also checks
// that it does say valid for a valid task, so that it is in use.
func TestFastSchemaSound(t *testing.T) {
	t.Parallel()
	cases := fastCases(t)
	var srcs [][]byte
	for _, in := range splitInputs(t) {
		srcs = append(srcs, in.src)
	}
	for _, v := range fastValues {
		srcs = append(srcs, []byte(v))
	}
	valid := 0
	for _, src := range srcs {
		valid += checkFastSound(t, cases, src)
	}
	if valid < 1000 {
		t.Errorf("the fast checker found %d values valid, want at least 1000: is it in use?", valid)
	}
	gen := generatedPack(3)
	root := buildYAML(t, gen)
	_, tasks := root.get("tasks")
	emb := EmbeddedSchema()
	for i, task := range tasks.items {
		if !emb.split.fastItem.valid(task) {
			t.Errorf("generated task %d: fast checker = not certain, want valid", i)
		}
	}
}

// checkFastSound checks every node of the YAML src against every case and
// returns how many the fast checker found valid.
func checkFastSound(t testing.TB, cases []fastCase, src []byte) int {
	t.Helper()
	root := buildYAML(t, src)
	if root == nil {
		return 0
	}
	valid := 0
	var walk func(n *node)
	walk = func(n *node) {
		for _, c := range cases {
			if !c.f.valid(n) {
				continue
			}
			valid++
			if err := c.s.Validate(n.jsonValue(true)); err != nil {
				t.Errorf("%s: the fast checker says %s is valid; the library says %v", c.name, clip(string(src)), err)
			}
		}
		for _, it := range n.items {
			walk(it)
		}
	}
	walk(root)
	return valid
}

// buildYAML builds the node tree of src, or returns nil when it does not
// parse or build.
func buildYAML(t testing.TB, src []byte) *node {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil
	}
	b := newBuilder("f.yaml", &collector{})
	root := b.build(&doc)
	if b.stopped {
		return nil
	}
	return root
}

// FuzzFastSchemaSound checks the fast checker on any YAML.
func FuzzFastSchemaSound(f *testing.F) {
	for _, v := range fastValues {
		f.Add([]byte(v))
	}
	for _, c := range splitCases {
		if len(c.src) < 2048 {
			f.Add([]byte(c.src))
		}
	}
	cases := fastCases(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		checkFastSound(t, cases, src)
	})
}
