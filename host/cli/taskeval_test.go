package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/cli"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/taskeval"
)

const (
	taskEvalTask = "../taskeval/testdata/task.json"
	taskEvalAI   = "../taskeval/testdata/ai.md"
)

// taskEvalMain runs assay against the SQLite database db. The tests are not
// parallel: urfave/cli applies its global help flag on every run.
func taskEvalMain(t *testing.T, db string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Main(context.Background(), append([]string{"--db", db}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// taskEvalStore opens db for inspection.
func taskEvalStore(t *testing.T, db string) *taskeval.Store {
	t.Helper()
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return taskeval.NewStore(st.DB(), st.Rebind)
}

func TestTaskEvalText(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	code, out, errOut := taskEvalMain(t, db, "task-eval", taskEvalTask, "--ai", taskEvalAI)
	if code != cli.ExitOK {
		t.Fatalf("task-eval --ai = exit %d, stderr %q, want 0", code, errOut)
	}
	for _, want := range []string{
		"task FN-101  run er-",
		"agentPerformance   38  70     48      weak",
		"taskOutcomeQuality   49  80     58      weak",
		"processCompliance   40  50     43      weak",
		"overall                51      weak",
	} {
		if !strings.Contains(squeeze(out), squeeze(want)) {
			t.Errorf("task-eval output = %q, want it to contain %q", out, want)
		}
	}
	if strings.Contains(out, "deterministic-only") {
		t.Errorf("task-eval --ai output = %q, want no deterministic-only note", out)
	}
}

// squeeze collapses runs of spaces so column widths do not matter.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestTaskEvalJSONStored(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	code, out, errOut := taskEvalMain(t, db, "task-eval", taskEvalTask, "--format", "json")
	if code != cli.ExitOK {
		t.Fatalf("task-eval --format json = exit %d, stderr %q, want 0", code, errOut)
	}
	var got struct {
		TaskID            string           `json:"taskId"`
		RunID             string           `json:"runId"`
		CategoryScores    []map[string]any `json:"categoryScores"`
		OverallScore      int              `json:"overallScore"`
		Band              string           `json:"band"`
		DeterministicOnly bool             `json:"deterministicOnly"`
		EvidenceBundle    taskeval.Bundle  `json:"evidenceBundle"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("task-eval --format json printed %q: %v", out, err)
	}
	if got.TaskID != "FN-101" || got.OverallScore != 43 || got.Band != "weak" || !got.DeterministicOnly {
		t.Errorf("task-eval --format json = task %q overall %d %s deterministicOnly %v, want FN-101 43 weak true",
			got.TaskID, got.OverallScore, got.Band, got.DeterministicOnly)
	}
	wantKeys := []string{"aiScore", "band", "category", "deterministicScore", "evidence", "finalScore", "rationale", "weight"}
	for _, cs := range got.CategoryScores {
		var keys []string
		for k := range cs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if diff := cmp.Diff(wantKeys, keys); diff != "" {
			t.Errorf("categoryScores item keys mismatch (-want +got):\n%s", diff)
		}
		if cs["aiScore"] != cs["deterministicScore"] || cs["finalScore"] != cs["deterministicScore"] {
			t.Errorf("deterministic-only item %v: want ai = final = deterministic", cs)
		}
	}
	if err := taskeval.ValidateBundle(&got.EvidenceBundle); err != nil || got.EvidenceBundle.RunID != got.RunID {
		t.Errorf("evidenceBundle: ValidateBundle = %v, runId %q; want valid, %q", err, got.EvidenceBundle.RunID, got.RunID)
	}

	ts := taskEvalStore(t, db)
	ctx := context.Background()
	run, err := ts.Run(ctx, got.RunID)
	if err != nil || run.Status != taskeval.RunCompleted || run.TaskID != "FN-101" {
		t.Fatalf("stored run %q = %+v, %v, want a completed run for FN-101", got.RunID, run, err)
	}
	stored, err := ts.Result(ctx, got.RunID, "FN-101")
	if err != nil || stored.OverallScore != 43 || len(stored.CategoryScores) != 3 {
		t.Errorf("stored result = %+v, %v, want overall 43 with 3 categories", stored, err)
	}
}

func TestTaskEvalAttachRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	ts := taskEvalStore(t, db)
	ctx := context.Background()
	run, err := ts.CreateRun(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := taskEvalMain(t, db, "task-eval", taskEvalTask, "--run", run.ID); code != cli.ExitOK {
		t.Fatalf("task-eval --run = exit %d, stderr %q", code, errOut)
	}
	// A second write for the same run and task replaces the first.
	if code, _, errOut := taskEvalMain(t, db, "task-eval", taskEvalTask, "--run", run.ID, "--ai", taskEvalAI); code != cli.ExitOK {
		t.Fatalf("task-eval --run --ai = exit %d, stderr %q", code, errOut)
	}
	got, err := ts.Run(ctx, run.ID)
	if err != nil || got.Status != taskeval.RunRunning {
		t.Errorf("attached run = %+v, %v, want it left running", got, err)
	}
	res, err := ts.Result(ctx, run.ID, "FN-101")
	if err != nil || res.OverallScore != 51 {
		t.Errorf("stored result = %+v, %v, want the second write (overall 51)", res, err)
	}

	if _, err := ts.SetStatus(ctx, run.ID, taskeval.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := taskEvalMain(t, db, "task-eval", taskEvalTask, "--run", run.ID)
	if code != cli.ExitInvalid || !strings.Contains(errOut, "is completed") {
		t.Errorf("task-eval --run COMPLETED = exit %d, stderr %q, want 2 saying the run is completed", code, errOut)
	}
	code, _, errOut = taskEvalMain(t, db, "task-eval", taskEvalTask, "--run", "er-nope")
	if code != cli.ExitInvalid || !strings.Contains(errOut, `no eval run "er-nope"`) {
		t.Errorf("task-eval --run er-nope = exit %d, stderr %q, want 2 naming the run", code, errOut)
	}
}

func TestTaskEvalInvalid(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	task, err := os.ReadFile(taskEvalTask)
	if err != nil {
		t.Fatal(err)
	}
	ai, err := os.ReadFile(taskEvalAI)
	if err != nil {
		t.Fatal(err)
	}
	broken := write("broken.json", "{\n  \"taskId\": \"T\",\n  \"status\": oops\n}\n")
	badScore := write("score.json", `{"taskId": "T", "deterministicScores": {"agentPerformance": 101, "taskOutcomeQuality": 1, "processCompliance": 1}}`)
	unknownID := write("ai-unknown.md", strings.Replace(string(ai), `"doc-1"`, `"doc-7"`, 1))
	answer := string(ai)[strings.Index(string(ai), "{") : strings.LastIndex(string(ai), "}")+1]
	withAI := write("with-ai.json", strings.Replace(string(task), `"taskId": "FN-101",`,
		`"taskId": "FN-101", "ai": `+answer+`,`, 1))
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no file", []string{"task-eval"}, []string{"give exactly one FILE.json"}},
		{"missing file", []string{"task-eval", filepath.Join(dir, "nope.json")}, []string{"reading open"}},
		{"JSON syntax error at line:col with the source line", []string{"task-eval", broken},
			[]string{broken + ":3:13: taskeval.syntax: invalid JSON: invalid character 'o'", `"status": oops`, "^"}},
		{"score out of range", []string{"task-eval", badScore},
			[]string{"deterministicScores.agentPerformance: must be an integer between 0 and 100, got 101"}},
		{"unknown evidence id", []string{"task-eval", taskEvalTask, "--ai", unknownID},
			[]string{unknownID + ":9:27:", `categories.taskOutcomeQuality.evidence[0].id: "doc-7" is not an entry of the evidence bundle`}},
		{"AI answer given twice", []string{"task-eval", withAI, "--ai", taskEvalAI}, []string{"the AI answer is given twice"}},
		{"bad format", []string{"task-eval", taskEvalTask, "--format", "yaml"}, []string{"--format: want text or json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := taskEvalMain(t, filepath.Join(dir, tt.name+".db"), tt.args...)
			if code != cli.ExitInvalid {
				t.Errorf("assay %v = exit %d, want %d (stderr %q)", tt.args, code, cli.ExitInvalid, errOut)
			}
			if out != "" {
				t.Errorf("assay %v printed %q on stdout, want nothing", tt.args, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("assay %v stderr = %q, want it to contain %q", tt.args, errOut, w)
				}
			}
		})
	}
}

func TestTaskEvalFlagPlacement(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"flags before the file", []string{"task-eval", "--format", "json", "--ai", taskEvalAI, taskEvalTask}, cli.ExitOK, `"overallScore": 51`},
		{"flags after the file, with =", []string{"task-eval", taskEvalTask, "--format=json", "--ai=" + taskEvalAI}, cli.ExitOK, `"overallScore": 51`},
		{"unknown flag after the file", []string{"task-eval", taskEvalTask, "--colour", "red"}, cli.ExitInvalid, "task-eval: unknown flag --colour"},
		{"flag without value", []string{"task-eval", taskEvalTask, "--run"}, cli.ExitInvalid, "flag --run needs a value"},
		{"two files", []string{"task-eval", taskEvalTask, taskEvalTask}, cli.ExitInvalid, "give exactly one FILE.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := taskEvalMain(t, db, tt.args...)
			if code != tt.code || !strings.Contains(out+errOut, tt.want) {
				t.Errorf("assay %v = exit %d, stdout %q, stderr %q; want exit %d and %q", tt.args, code, out, errOut, tt.code, tt.want)
			}
		})
	}
}
