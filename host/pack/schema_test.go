package pack

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/packs"
)

func embeddedSchemaBytes(t *testing.T) []byte {
	t.Helper()
	return packs.Schema()
}

func TestEmbeddedSchema(t *testing.T) {
	t.Parallel()
	s := EmbeddedSchema()
	want := []string{"answer_keywords", "composite", "memory_grounding", "stigmergic", "task_state", "tool_sequence"}
	if diff := cmp.Diff(want, s.ScorerEnum()); diff != "" {
		t.Errorf("EmbeddedSchema().ScorerEnum() (-want +got):\n%s", diff)
	}
	if s.Source() != "embedded" {
		t.Errorf("EmbeddedSchema().Source() = %q, want embedded", s.Source())
	}
	onDisk, err := os.ReadFile("../../" + packs.SchemaPath)
	if err != nil || !bytes.Equal(onDisk, packs.Schema()) {
		t.Errorf("the embedded schema differs from %s (%v)", packs.SchemaPath, err)
	}
}

func TestLoadSchemaErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope.json"), "no such file"},
		{"not json", write("bad.json", "{"), "parsing JSON"},
		{"no enum", write("noenum.json", `{"type":"object","properties":{"tasks":{"items":{"properties":{"scorer":{"type":"string"}}}}}}`), "no enum"},
		{"bad schema", write("bad2.json", `{"type":"object","minItems":"x","properties":{"tasks":{"items":{"properties":{"scorer":{"enum":["a"]}}}}}}`), "compiling"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := LoadSchema(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadSchema(%q) = %v, %v; want an error mentioning %q", tc.path, s, err, tc.want)
			}
		})
	}
	inline := write("inline.json", `{"type":"object","properties":{"tasks":{"items":{"properties":{"scorer":{"enum":["b","a"]}}}}}}`)
	s, err := LoadSchema(inline)
	if err != nil || !slices.Equal(s.ScorerEnum(), []string{"a", "b"}) {
		t.Errorf("LoadSchema(%q) = %v, %v; want enum [a b]", inline, s, err)
	}
}

func TestRewriteScorerEnum(t *testing.T) {
	t.Parallel()
	orig := embeddedSchemaBytes(t)
	path := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	ids := []string{"tool_sequence", "acme_invoice", "answer_keywords", "acme_invoice"}
	if err := RewriteScorerEnum(path, ids); err != nil {
		t.Fatalf("RewriteScorerEnum(%q, %v) = %v", path, ids, err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const oldEnum = `["answer_keywords", "composite", "memory_grounding", "stigmergic", "task_state", "tool_sequence"]`
	const newEnum = `["acme_invoice", "answer_keywords", "tool_sequence"]`
	want := strings.Replace(string(orig), oldEnum, newEnum, 1)
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("RewriteScorerEnum changed more than the enum (-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("RewriteScorerEnum changed the file mode: %v, %v", fi.Mode(), err)
	}
	s, err := LoadSchema(path)
	if err != nil || !slices.Equal(s.ScorerEnum(), []string{"acme_invoice", "answer_keywords", "tool_sequence"}) {
		t.Errorf("LoadSchema after rewrite = %v, %v", s, err)
	}
	if err := RewriteScorerEnum(path, nil); err == nil {
		t.Errorf("RewriteScorerEnum(%q, nil) = nil, want an error", path)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, got) {
		t.Errorf("a failed RewriteScorerEnum changed the file")
	}
	if err := RewriteScorerEnum(filepath.Join(t.TempDir(), "missing.json"), ids); err == nil {
		t.Errorf("RewriteScorerEnum(missing) = nil, want an error")
	}
}
