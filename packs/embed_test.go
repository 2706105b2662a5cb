package packs

import (
	"encoding/json"
	"io/fs"
	"slices"
	"testing"
)

func TestSchema(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatalf("Schema() is not JSON: %v", err)
	}
	if got, want := doc["$schema"], "https://json-schema.org/draft/2020-12/schema"; got != want {
		t.Errorf("Schema() $schema = %v, want %v", got, want)
	}
	s := Schema()
	s[0] = 'x'
	if Schema()[0] != '{' {
		t.Errorf("Schema() returned the embedded bytes, not a copy")
	}
}

func TestBundled(t *testing.T) {
	got, err := fs.Glob(Bundled(), "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"example.yaml", "release-engineering.yaml", "support-desk.yaml"}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("Bundled() = %v, want it to hold %s", got, w)
		}
	}
}
