package e2e

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaFor compiles packs/schema/<name>.
func schemaFor(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "packs", "schema", name))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///"+name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///" + name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustValidate(t *testing.T, s *jsonschema.Schema, what string, b []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err == nil {
		err = s.Validate(v)
	}
	if err != nil {
		t.Errorf("%s does not match its schema: %v", what, err)
	}
}

// TestCIOutputsOnExampleRuns (issue 20 items 1, 2, 5): verifying the
// example runs writes JUnit whose strict parse counts match summary.json
// (a suite per candidate, a case per task plus the gates, failures where
// checks or gates failed), a Markdown summary naming every candidate, and
// results.json, summary.json and --format json that match their schemas.
func TestCIOutputsOnExampleRuns(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	junit, md := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "summary.md")
	r := run(t, filepath.Join(dir, "assay.db"), "verify", "--pack", "packs/example.yaml",
		"--run", "examples/runs/candidate-a", "--run", "examples/runs/candidate-b", "--run", "examples/runs/candidate-c",
		"--out", out, "--junit", junit, "--markdown", md, "--format", "json")
	if r.code != 1 {
		t.Fatalf("verify exit %d, want 1\nstderr:\n%s", r.code, r.stderr)
	}
	mustValidate(t, schemaFor(t, "summary.v1.json"), "--format json", []byte(r.stdout))
	for _, f := range []struct{ file, schema string }{{"summary.json", "summary.v1.json"}, {"results.json", "results.v1.json"}} {
		b, err := os.ReadFile(filepath.Join(out, f.file))
		if err != nil {
			t.Fatal(err)
		}
		mustValidate(t, schemaFor(t, f.schema), f.file, b)
	}

	var sum struct {
		Candidates []struct {
			Candidate string `json:"candidate"`
			Gates     struct {
				Passed bool `json:"passed"`
			} `json:"gates"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests  int `xml:"tests,attr"`
		Suites []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	if err := d.Decode(&doc); err != nil {
		t.Fatalf("junit.xml: %v", err)
	}
	if len(doc.Suites) != len(sum.Candidates) || doc.Tests != 4*len(sum.Candidates) {
		t.Fatalf("junit: %d suites, %d tests; want one suite of 3 tasks + gates per candidate (%d)", len(doc.Suites), doc.Tests, len(sum.Candidates))
	}
	for i, s := range doc.Suites {
		failures := 0
		for _, c := range s.Cases {
			if c.Failure != nil {
				failures++
			}
		}
		gates := s.Cases[len(s.Cases)-1]
		if s.Name != sum.Candidates[i].Candidate || s.Tests != len(s.Cases) || s.Failures != failures ||
			gates.Name != "gates" || (gates.Failure == nil) != sum.Candidates[i].Gates.Passed {
			t.Errorf("suite %s: tests %d failures %d (counted %d), gates case %q failed %t; summary gates passed %t",
				s.Name, s.Tests, s.Failures, failures, gates.Name, gates.Failure != nil, sum.Candidates[i].Gates.Passed)
		}
	}
	m, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| candidate-a | PASS |", "| candidate-b | FAIL | 3 failed |", "**Pareto frontier:** candidate-a, candidate-c",
		"### candidate-b: FAIL", "| task_create_release_blocker | scored | 0.122 | finalize_missing, state_not_changed |"} {
		if !strings.Contains(string(m), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, m)
		}
	}
}

// TestVerifyOTLPInput (issue 20 item 4): --otlp through the command line:
// two candidates from one file, the warnings on stderr naming the traces.
func TestVerifyOTLPInput(t *testing.T) {
	dir := t.TempDir()
	r := run(t, filepath.Join(dir, "assay.db"), "verify", "--pack", "packs/example.yaml",
		"--otlp", "host/verify/testdata/otlp/genai.jsonl", "--out", filepath.Join(dir, "out"), "--format", "json")
	if r.code != 1 {
		t.Fatalf("verify exit %d, want 1 (gates fail: a task is missing)\nstderr:\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"otlp.no_content", "0af7651916cd43dd8448eb211c80319c", "otlp.no_label"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	var sum struct {
		Candidates []struct {
			Candidate string `json:"candidate"`
			N         int    `json:"n"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Candidates) != 2 || sum.Candidates[0].Candidate != "agent-x" || sum.Candidates[1].N != 2 {
		t.Errorf("candidates = %+v, want agent-x and agent-y with 2 turns each", sum.Candidates)
	}
	mustValidate(t, schemaFor(t, "summary.v1.json"), "--format json", []byte(r.stdout))

	// The same file again: every turn's input key (the sha256 of the NDJSON
	// its spans map to) is unchanged, so every turn is reused.
	again := run(t, filepath.Join(dir, "assay.db"), "verify", "--pack", "packs/example.yaml",
		"--otlp", "host/verify/testdata/otlp/genai.jsonl")
	if !strings.Contains(again.stdout, "resumed: 2 recorded turns reused") || strings.Contains(again.stdout, "rescored") {
		t.Errorf("second verification did not reuse the recorded turns:\n%s", again.stdout)
	}
}
