package verify

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/assay-eval/assay/pkg/scorer"
)

// outputSchema compiles packs/schema/<name>.
func outputSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("../../packs/schema", name))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///"+name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///" + name)
	if err != nil {
		t.Fatalf("compiling %s: %v", name, err)
	}
	return s
}

// validateJSON validates JSON bytes against s; the error names what failed.
func validateJSON(s *jsonschema.Schema, b []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// TestOutputsMatchSchemas (issue 20 item 5): results.json and summary.json
// of verifications that pass, fail, lose a candidate and lose a scorer all
// validate against packs/schema/{results,summary}.v1.json, and summary.json
// carries schema_version.
func TestOutputsMatchSchemas(t *testing.T) {
	results, summary := outputSchema(t, "results.v1.json"), outputSchema(t, "summary.v1.json")
	broken := copyRun(t, "../../examples/runs/candidate-a", "candidate-x")
	if err := os.WriteFile(filepath.Join(broken, "results.json"), []byte("[{\"label\": oops}]"), 0o644); err != nil {
		t.Fatal(err)
	}
	failing := newLocal()
	failing.fail[scorer.ID("task_state")] = true
	runs := []string{"../../examples/runs/candidate-a", "../../examples/runs/candidate-b", "../../examples/runs/candidate-c"}
	for _, tt := range []struct {
		name string
		l    *local
		runs []string
	}{
		{"example runs", newLocal(), runs},
		{"a broken candidate", newLocal(), append([]string{broken}, runs[0])},
		{"a scorer that cannot run", failing, runs[:1]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := exampleRequest(t, tt.l, tt.runs...)
			if _, err := Run(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			for name, s := range map[string]*jsonschema.Schema{"results.json": results, "summary.json": summary} {
				b, err := os.ReadFile(filepath.Join(req.OutDir, name))
				if err != nil {
					t.Fatal(err)
				}
				if err := validateJSON(s, b); err != nil {
					t.Errorf("%s does not match its schema: %v\n%s", name, err, b)
				}
				if name == "summary.json" && !bytes.Contains(b, []byte(`"schema_version": 1`)) {
					t.Errorf("summary.json has no schema_version 1:\n%s", b)
				}
			}
		})
	}
}

// TestOutputSchemasReject: the schemas are not vacuous; what breaks the
// contract fails them, and an added field of another name does not.
func TestOutputSchemasReject(t *testing.T) {
	t.Parallel()
	results, summary := outputSchema(t, "results.v1.json"), outputSchema(t, "summary.v1.json")
	const turn = `{"candidate":"c","label":"l","persona":"p","status":"scored","process_score":1,"kpi_score":1,"turn_score":1,` +
		`"finalized":true,"error":false,"latency_s":null,"tool_calls":0,"cost_usd":null,"checks":[],"failure_tags":[],` +
		`"scorer":{"id":"s","version":"v","sha256":""}`
	const sum = `"pack":{"name":"n","path":"p","sha256":"` + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" +
		`"},"candidates":[],"frontier":[],"errors":[],"scorer_failures":[],"unreadable_turns":0`
	for _, tt := range []struct {
		name   string
		s      *jsonschema.Schema
		doc    string
		reject string // "" when the document is valid
	}{
		{"a turn", results, "[" + turn + "}]", ""},
		{"a turn with an added field", results, "[" + turn + `,"epoch":2}]`, ""},
		{"an unknown status", results, "[" + strings.Replace(turn, `"scored"`, `"done"`, 1) + "}]", "status"},
		{"a scored turn without a score", results, "[" + strings.Replace(turn, `"turn_score":1`, `"turn_score":null`, 1) + "}]", "turn_score"},
		{"a summary", summary, `{"schema_version":1,` + sum + "}", ""},
		{"a summary with added fields", summary, `{"schema_version":1,"drift":{"units":[]},` + sum + "}", ""},
		{"no schema_version", summary, "{" + sum + "}", "schema_version"},
		{"another schema_version", summary, `{"schema_version":2,` + sum + "}", "schema_version"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := validateJSON(tt.s, []byte(tt.doc))
			switch {
			case tt.reject == "" && err != nil:
				t.Errorf("valid document rejected: %v", err)
			case tt.reject != "" && (err == nil || !strings.Contains(err.Error(), tt.reject)):
				t.Errorf("validate = %v, want a rejection naming %s", err, tt.reject)
			}
		})
	}
}
