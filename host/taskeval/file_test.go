package taskeval

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDecodeFile(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/task.json")
	if err != nil {
		t.Fatal(err)
	}
	f, diags := DecodeFile("task.json", data)
	if diags != nil {
		t.Fatalf("DecodeFile(task.json) = %v", diags)
	}
	at := func(h, m int) time.Time { return time.Date(2026, 5, 1, h, m, 0, 0, time.UTC) }
	want := Task{
		TaskID: "FN-101", Status: "in-review",
		Metadata: Metadata{Title: "Add retry to the export job", Description: "Retry transient failures of the nightly export, at most three times.",
			PRURL: "https://example.com/pr/42", UpdatedAt: at(10, 0)},
		MergeCommitSHA: "abc1234",
		Commits:        []Commit{{SHA: "abc1234", Subject: "export: retry transient failures", Author: "agent", Timestamp: at(9, 0)}},
		Workflow: []WorkflowStep{{ID: "lint", Name: "lint", Status: StepPassed, CompletedAt: at(9, 10)},
			{ID: "tests", Name: "tests", Status: StepFailed, Output: "1 flaky test", CompletedAt: at(9, 20)}},
		Documents: []Document{{Key: "spec", Revision: 2, Author: "pm", Content: "Retry at most three times.", UpdatedAt: at(8, 0)}},
		Activity: []ActivityEntry{{Timestamp: at(9, 5), Action: "[timing] tests in 450ms"},
			{Timestamp: at(9, 6), Action: "warning: flaky"}, {Timestamp: at(9, 7), Action: "error: boom"}},
		AgentLogs: []AgentLog{{Timestamp: at(9, 1), Type: "tool_call", Agent: "executor", Text: "ran go test ./..."}},
		RunAudit:  []AuditEvent{{ID: "ev-1", Timestamp: at(9, 2), Domain: "git", MutationType: "commit", Target: "abc1234"}},
	}
	if diff := cmp.Diff(want, f.Task, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("DecodeFile(task.json) mismatch (-want +got):\n%s", diff)
	}
	scores, _, why := f.Scores()
	if diff := cmp.Diff(Scores{AgentPerformance: 38, TaskOutcomeQuality: 49, ProcessCompliance: 40}, scores); diff != "" {
		t.Errorf("File.Scores() mismatch (-want +got):\n%s", diff)
	}
	if !strings.Contains(why, "workflow 1/2 passed") {
		t.Errorf("File.Scores() rationale = %q, want the signals explained", why)
	}
}

func TestDecodeFileDeterministicScores(t *testing.T) {
	t.Parallel()
	f, diags := DecodeFile("f.json", []byte(`{"taskId": "T", "deterministicScores": {"agentPerformance": 10, "taskOutcomeQuality": 20, "processCompliance": 30},
		"ai": "`+"```"+`json\n{\"categories\": {\"agentPerformance\": {\"score\": 1, \"rationale\": \"r\", \"evidence\": [{\"kind\": \"k\", \"label\": \"l\"}]}, \"taskOutcomeQuality\": {\"score\": 2, \"rationale\": \"r\", \"evidence\": [{\"kind\": \"k\", \"label\": \"l\"}]}, \"processCompliance\": {\"score\": 3, \"rationale\": \"r\", \"evidence\": [{\"kind\": \"k\", \"label\": \"l\"}]}}}\n`+"```"+`"}`))
	if diags != nil {
		t.Fatalf("DecodeFile() = %v", diags)
	}
	scores, _, why := f.Scores()
	if diff := cmp.Diff(Scores{AgentPerformance: 10, TaskOutcomeQuality: 20, ProcessCompliance: 30}, scores); diff != "" {
		t.Errorf("File.Scores() mismatch (-want +got):\n%s", diff)
	}
	if !strings.Contains(why, "given in the input file") || f.AI == nil || f.AI.Categories[ProcessCompliance].Score != 3 {
		t.Errorf("DecodeFile() = rationale %q, ai %+v; want given scores and the AI text parsed", why, f.AI)
	}
}

func TestDecodeFileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want []string // rendered diagnostics, in order
	}{
		{"syntax error", "{\n  \"taskId\": \"T\",\n  \"status\": oops\n}",
			[]string{"f.json:3:13: taskeval.syntax: invalid JSON: invalid character 'o' looking for beginning of value"}},
		{"unterminated", "{\"taskId\": \"T\"", []string{"f.json:1:15: taskeval.syntax: invalid JSON: unexpected end of input"}},
		{"duplicate key", "{\"taskId\": \"T\", \"taskId\": \"U\"}", []string{`f.json:1:17: taskeval.syntax: duplicate key "taskId"`}},
		{"not an object", "[1]", []string{"f.json:1:1: taskeval.field: top level: want an object, got an array"}},
		{"every field problem at once", `{
  "status": 3,
  "mergeCommitSha": "xyz",
  "commits": [{"sha": "abc", "subject": "s"}, {"sha": "ABCDEF1"}, {"sha": "abcdef1"}],
  "workflow": [{"name": "lint", "status": "green"}],
  "documents": [{"key": "k", "revision": 1.5}],
  "activity": [{"timestamp": "yesterday", "action": "a"}],
  "deterministicScores": {"agentPerformance": 101, "taskOutcomeQuality": 50.5, "processCompliance": 1},
  "colour": "red"
}`, []string{
			`f.json:1:1: taskeval.field: top level: missing required field "taskId"`,
			"f.json:2:13: taskeval.field: status: want a string, got a number",
			`f.json:3:21: taskeval.field: mergeCommitSha: want 7 to 40 hex digits, got "xyz"`,
			`f.json:4:23: taskeval.field: commits[0].sha: want 7 to 40 hex digits, got "abc"`,
			`f.json:4:75: taskeval.field: commits[2].sha: commit abcdef1 is already listed at commits[1]`,
			`f.json:5:43: taskeval.field: workflow[0].status: want passed, failed or pending, got "green"`,
			"f.json:6:42: taskeval.field: documents[0].revision: want a non-negative integer, got 1.5",
			`f.json:7:30: taskeval.field: activity[0].timestamp: want an RFC 3339 timestamp such as 2026-05-01T12:00:00Z, got "yesterday"`,
			"f.json:8:47: taskeval.score: deterministicScores.agentPerformance: must be an integer between 0 and 100, got 101",
			"f.json:8:74: taskeval.score: deterministicScores.taskOutcomeQuality: must be an integer between 0 and 100, got 50.5",
			`f.json:9:3: taskeval.field: top level: unknown field "colour"`,
		}},
		{"ai problems are positioned in the file", `{"taskId": "T",
 "ai": {"categories": {"agentPerformance": {"score": 5, "rationale": "r", "evidence": [{"kind": "k", "label": "l"}]}}}}`, []string{
			"f.json:2:23: taskeval.ai: ai.categories: missing category processCompliance",
			"f.json:2:23: taskeval.ai: ai.categories: missing category taskOutcomeQuality",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, diags := DecodeFile("f.json", []byte(tt.src))
			if f != nil {
				t.Errorf("DecodeFile() = %+v, want nil", f)
			}
			var got []string
			for _, d := range diags {
				got = append(got, d.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodeFile() diagnostics mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
