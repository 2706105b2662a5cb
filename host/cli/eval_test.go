package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/cli"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verdict"
)

// evalRun runs assay with args and returns the exit code, stdout and stderr.
// urfave/cli/v2 mutates package-level flags while parsing, so CLI tests do
// not run in parallel.
func evalRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Main(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func evalWriteFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const evalFile = `{
  "taskId": "checkout-42",
  "metrics": {"correctness": 0.95, "security": 0.9, "architecture": 0.9, "performance": null},
  "tests": {"passed": 42, "failed": 0},
  "regressions": [],
  "weightings": {"security": 0.2},
  "thresholds": {"pass": 0.9, "passWithWarnings": 0.75},
  "kind": "api-contract",
  "content": {"method": "GET", "request": {}, "response": {}}
}
`

func TestEvalCLI(t *testing.T) {
	file := evalWriteFile(t, "eval.json", evalFile)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
		wantErr  []string
	}{
		{"metrics flag, text", []string{"eval", "--metrics", "correctness=0.9,security=0.8"}, 0,
			[]string{"verdict     PASS\n", "score       0.875", "correctness  0.900  (default weight 0.30)"}, nil},
		{"metrics flag, warnings", []string{"eval", "--metrics", "correctness=0.8,cost=3"}, 0,
			[]string{"verdict     PASS_WITH_WARNINGS", "cost         3.000  (not weighted)", "Raise the score from 0.8 to the pass threshold 0.85"}, nil},
		{"flags after the file", []string{"eval", "x.json", "--format", "json"}, 2, nil, []string{"x.json: no such file"}},
		{"metrics flag, pass", []string{"eval", "--metrics", "correctness=0.95,security=0.9,architecture=0.9,testResults=0.95", "--tests", "passed=42,failed=0"}, 0,
			[]string{"verdict     PASS", "tests       42 passed, 0 failed"}, nil},
		{"value not a number names it", []string{"eval", "--metrics", "correctness=0.9,security=high"}, 2,
			nil, []string{`--metrics: security: "high" is not a number`}},
		{"NaN is not a number", []string{"eval", "--metrics", "correctness=NaN"}, 2, nil, []string{`correctness: "NaN" is not a number`}},
		{"out of range", []string{"eval", "--metrics", "correctness=90"}, 2, nil, []string{"correctness: 90 is outside [0,1]"}},
		{"missing value", []string{"eval", "--metrics", "correctness"}, 2, nil, []string{`"correctness": want NAME=VALUE`}},
		{"no input", []string{"eval"}, 2, nil, []string{"give FILE.json, --metrics"}},
		{"fail-on FAIL with FAIL", []string{"eval", "--metrics", "correctness=0.4", "--fail-on", "FAIL"}, 1,
			[]string{"verdict     FAIL"}, []string{"verdict FAIL is FAIL or worse"}},
		{"fail-on FAIL with BLOCKED", []string{"eval", "--metrics", "correctness=0.9", "--tests", "passed=0,failed=3", "--fail-on", "fail"}, 1,
			[]string{"verdict     BLOCKED"}, nil},
		{"fail-on FAIL with warnings passes", []string{"eval", "--metrics", "correctness=0.8", "--fail-on", "FAIL"}, 0,
			[]string{"verdict     PASS_WITH_WARNINGS"}, nil},
		{"fail-on warnings with warnings", []string{"eval", "--metrics", "correctness=0.8", "--fail-on", "pass-with-warnings"}, 1, nil, nil},
		{"fail-on BLOCKED with FAIL passes", []string{"eval", "--metrics", "correctness=0.5", "--fail-on", "BLOCKED"}, 0, nil, nil},
		{"unknown fails every fail-on", []string{"eval", "--fail-on", "BLOCKED", evalWriteFile(t, "empty.json", `{"metrics": {}}`)}, 1,
			[]string{"verdict     UNKNOWN", "Provide measured evidence"}, nil},
		{"bad fail-on", []string{"eval", "--metrics", "correctness=1", "--fail-on", "GOOD"}, 2, nil, []string{"--fail-on: unknown verdict"}},
		{"thresholds flag", []string{"eval", "--metrics", "correctness=0.85", "--thresholds", "pass=0.9,passWithWarnings=0.8"}, 0,
			[]string{"PASS_WITH_WARNINGS"}, nil},
		{"bad thresholds", []string{"eval", "--metrics", "correctness=0.85", "--thresholds", "pass=0.5,passWithWarnings=0.8"}, 2,
			nil, []string{"passWithWarnings 0.8 is above pass 0.5"}},
		{"regressions flag", []string{"eval", "--metrics", "correctness=1", "--regression", "login broken"}, 0,
			[]string{"verdict     FAIL", "  - login broken", "Resolve the 1 regression: login broken."}, nil},
		{"file", []string{"eval", file}, 0,
			[]string{"verdict     PASS", "task        checkout-42", "artifact    api-contract INVALID", `required field "path" is missing`,
				"Repair the api-contract artifact"}, nil},
		{"file and metrics override", []string{"eval", "--metrics", "correctness=0.1", file}, 0, []string{"verdict     FAIL"}, nil},
		{"bad format", []string{"eval", "--metrics", "correctness=1", "--format", "yaml"}, 2, nil, []string{"--format"}},
		{"report with metrics", []string{"eval", "--report", "1", "--metrics", "correctness=1"}, 2, nil, []string{"--report takes no"}},
		{"misspelt metric warns with a suggestion", []string{"eval", "--metrics", "correctnes=0.9"}, 0,
			[]string{"verdict     UNKNOWN"}, []string{`warning: --metrics: metric "correctnes" has no weight`, `did you mean "correctness"?`}},
		{"tests total below passed+failed", []string{"eval", "--tests", "passed=3,failed=1,total=2"}, 2,
			nil, []string{"--tests: total: 2 is less than passed + failed (4)"}},
		{"blank regression", []string{"eval", "--metrics", "correctness=1", "--regression", " "}, 2, nil, []string{"--regression: must not be blank"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := evalRun(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("assay %q = exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.wantCode, out, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("assay %q stdout = %q, want it to contain %q", tt.args, out, w)
				}
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("assay %q stderr = %q, want it to contain %q", tt.args, errOut, w)
				}
			}
		})
	}
}

func TestEvalCLIJSON(t *testing.T) {
	file := evalWriteFile(t, "eval.json", evalFile)
	code, out, errOut := evalRun(t, "eval", "--format", "json", file)
	if code != 0 {
		t.Fatalf("assay eval --format json = exit %d: %s", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	want := []string{"artifact", "confidence", "metrics", "recommendations", "regressions", "score", "success", "taskId", "tests", "verdict"}
	if d := cmp.Diff(want, evalSorted(keys)); d != "" {
		t.Errorf("JSON keys mismatch (-want +got):\n%s", d)
	}
	var ev verdict.Evaluation
	if err := json.Unmarshal([]byte(out), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Verdict != verdict.Pass || !ev.Success || ev.TaskID != "checkout-42" || ev.Artifact == nil || ev.Artifact.Valid {
		t.Errorf("assay eval --format json = %+v, want PASS for checkout-42 with an invalid artifact", ev)
	}
	if _, ok := ev.Metrics["performance"]; ok {
		t.Errorf("metrics = %v: a null metric is not measured", ev.Metrics)
	}
	if ev.Metrics["artifactValidity"] != ev.Artifact.Score {
		t.Errorf("metrics.artifactValidity = %v, want the artifact score %v", ev.Metrics["artifactValidity"], ev.Artifact.Score)
	}
}

func evalSorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestEvalCLIMalformedFile(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []string
	}{
		{"syntax", "{\n  \"metrics\": {\"correctness\": 0.9,}\n}", []string{":2:34: eval.syntax: not valid JSON: invalid character '}'"}},
		{"truncated", "{\n  \"metrics\": {", []string{":2:15: eval.syntax: not valid JSON"}},
		{"not a number", "{\n  \"metrics\": {\"correctness\": \"high\"}\n}",
			[]string{`:2:30: eval.type: metrics.correctness: want a number, got string`, `    ^`}},
		{"tests wrong type", "{\"metrics\": {}, \"tests\": {\"passed\": 1.5}}", []string{":1:37: eval.type: tests.passed: want a number, got number 1.5"}},
		{"metrics not an object", "{\"metrics\": [1]}", []string{":1:13: eval.type: metrics: want an object, got array"}},
		{"unknown field", "{\n  \"metrics\": {},\n  \"verdict\": \"PASS\"\n}", []string{`:3:3: eval.unknown_field: unknown field "verdict"`}},
		{"out of range and negative", "{\n  \"metrics\": {\"correctness\": 1.5},\n  \"tests\": {\"passed\": -1, \"failed\": 0}\n}",
			[]string{":2:15: eval.value: metrics.correctness: 1.5 is outside [0,1]", ":3:13: eval.value: tests.passed: -1 is negative"}},
		{"weighting an unweighted metric", `{"metrics": {"correctness": 1}, "weightings": {"cost": 1}}`, []string{"eval.value: weightings.cost: cost is never weighted"}},
		{"bad thresholds", `{"metrics": {"correctness": 1}, "thresholds": {"pass": 2}}`, []string{"threshold pass: want a number in [0,1], got 2"}},
		{"trailing data", `{"metrics": {}} x`, []string{"eval.syntax"}},
		{"not an object", `[1, 2]`, []string{":1:1: eval.type: the file: want an object, got array"}},
		{"kind without content", "{\n  \"metrics\": {\"correctness\": 1},\n  \"kind\": \"trace\"\n}",
			[]string{`:3:3: eval.value: kind "trace" is given without content`}},
		{"tests total below passed+failed", `{"tests": {"passed": 3, "failed": 1, "total": 2}}`,
			[]string{":1:38: eval.value: tests.total: 2 is less than passed + failed (4)"}},
		{"blank regression", `{"metrics": {"correctness": 1}, "regressions": ["login broken", " "]}`,
			[]string{"eval.value: regressions[1]: must not be blank"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := evalWriteFile(t, "bad.json", tt.content)
			code, out, errOut := evalRun(t, "eval", p)
			if code != 2 {
				t.Errorf("assay eval %s = exit %d, want 2\nstdout: %s\nstderr: %s", tt.name, code, out, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("assay eval %s stderr = %q, want it to contain %q", tt.name, errOut, w)
				}
			}
		})
	}
	code, _, errOut := evalRun(t, "eval", filepath.Join(t.TempDir(), "missing.json"))
	if code != 2 || !strings.Contains(errOut, "missing.json") {
		t.Errorf("assay eval missing.json = exit %d, %q, want exit 2 naming the file", code, errOut)
	}
	p := evalWriteFile(t, "kind.json", `{"metrics": {"correctness": 1}, "kind": "poem", "content": "roses"}`)
	code, _, errOut = evalRun(t, "eval", p)
	if code != 0 || !strings.Contains(errOut, `warning: eval.kind: unknown artifact kind "poem"`) {
		t.Errorf("assay eval (unknown kind) = exit %d, %q, want exit 0 with a warning", code, errOut)
	}
	p = evalWriteFile(t, "nokind.json", `{"metrics": {"correctness": 1}, "content": "roses"}`)
	code, _, errOut = evalRun(t, "eval", p)
	if code != 0 || !strings.Contains(errOut, `:1:33: warning: eval.kind: content without kind, validated as raw`) {
		t.Errorf("assay eval (content without kind) = exit %d, %q, want exit 0 with a positioned warning", code, errOut)
	}
	p = evalWriteFile(t, "typo.json", `{"metrics": {"correctnes": 0.9, "usability": 0.5}, "weightings": {"usability": 0.2}}`)
	code, out, errOut := evalRun(t, "eval", p)
	if code != 0 || !strings.Contains(errOut, `:1:14: warning: eval.metric: metric "correctnes" has no weight`) ||
		!strings.Contains(errOut, `did you mean "correctness"?`) || strings.Contains(errOut, `metric "usability"`) {
		t.Errorf("assay eval (misspelt metric) = exit %d, stderr %q, want a positioned warning for correctnes only", code, errOut)
	}
	// Only the weighted usability (0.5) counts: FAIL, not the 0.9 the
	// author meant.
	if !strings.Contains(out, "verdict     FAIL") || !strings.Contains(out, "score       0.500") {
		t.Errorf("assay eval (misspelt metric) stdout = %q, want FAIL with score 0.500", out)
	}
}

func TestEvalCLIReport(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "assay.db")
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatalf("store.Open = %v", err)
	}
	ev := verdict.Evaluate(verdict.FromRun(verdict.RunEvidence{TaskID: "cand-a", MeanKPIScore: .6, ChecksPassed: 8, ChecksFailed: 2, TasksScored: 3, TasksTotal: 4}))
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	withVerdict, err := st.BeginRun(ctx, store.RunKey{Candidate: "cand-a", PackSHA256: "p1", ScorerVersion: "v1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, withVerdict.ID, store.RunCompleted, []byte(`{}`), b); err != nil {
		t.Fatal(err)
	}
	running, err := st.BeginRun(ctx, store.RunKey{Candidate: "cand-b", PackSHA256: "p1", ScorerVersion: "v1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	id := evalItoa

	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
		wantErr  []string
	}{
		{"text", []string{"--db", db, "eval", "--report", id(withVerdict.ID)}, 0,
			[]string{"verdict     FAIL", "task        cand-a", "tests       8 passed, 2 failed", "Fix the 2 failing tests."}, nil},
		{"json", []string{"--db", db, "eval", "--report", id(withVerdict.ID), "--format", "json"}, 0, []string{`"verdict": "FAIL"`, `"taskId": "cand-a"`}, nil},
		{"fail-on", []string{"--db", db, "eval", "--report", id(withVerdict.ID), "--fail-on", "FAIL"}, 1, nil, nil},
		{"no verdict yet", []string{"--db", db, "eval", "--report", id(running.ID)}, 2, nil, []string{"has no stored verdict"}},
		{"unknown run", []string{"--db", db, "eval", "--report", "999"}, 2, nil, []string{"no run 999"}},
		{"not a number", []string{"--db", db, "eval", "--report", "latest"}, 2, nil, []string{`run id "latest" is not a positive integer`}},
		{"no database", []string{"--db", filepath.Join(t.TempDir(), "none.db"), "eval", "--report", "1"}, 3, nil, []string{"no database at"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := evalRun(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("assay %q = exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.wantCode, out, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("assay %q stdout = %q, want it to contain %q", tt.args, out, w)
				}
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("assay %q stderr = %q, want it to contain %q", tt.args, errOut, w)
				}
			}
		})
	}
}

func evalItoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
