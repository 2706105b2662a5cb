package taskeval

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCollectSignalsReference(t *testing.T) {
	t.Parallel()
	task := &Task{
		TaskID:         "FN-1",
		Status:         "in-review",
		MergeCommitSHA: "abc1234",
		Workflow:       []WorkflowStep{{Name: "lint", Status: StepPassed}, {Name: "tests", Status: StepFailed}},
		Activity: []ActivityEntry{
			{Action: "[timing] tests in 450ms"},
			{Action: "warning: flaky"},
			{Action: "error: boom"},
		},
	}
	got := CollectSignals(task)
	want := Signals{
		Workflow:    WorkflowSummary{Total: 2, Passed: 1, Failed: 1, Pending: 0},
		CommitCount: 1, ErrorCount: 1, WarningCount: 1, TimingEntries: 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CollectSignals(reference) mismatch (-want +got):\n%s", diff)
	}
	// wpr 50, review 50, commit 15, warning 5, error 20, timing 100.
	wantScores := Scores{AgentPerformance: 38, TaskOutcomeQuality: 49, ProcessCompliance: 40}
	if diff := cmp.Diff(wantScores, DeterministicScores(got)); diff != "" {
		t.Errorf("DeterministicScores(reference) mismatch (-want +got):\n%s", diff)
	}
}

func TestCollectSignals(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		task Task
		want Signals
	}{
		{"empty", Task{}, Signals{}},
		{"commits: merge sha and first hex run per line, distinct, any case",
			Task{MergeCommitSHA: "ABC1234", Activity: []ActivityEntry{
				{Action: "merged abc1234"},                                                       // same as merge sha
				{Action: "pushed deadbeef0 then 1234567890abc"},                                  // only the first run counts
				{Action: "reverted", Outcome: "to cafe1234"},                                     // outcome is part of the line
				{Action: "short abc12 and long " + "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3"}, // 41 hex: not a run of 7-40
			}},
			Signals{CommitCount: 3}},
		{"errors, warnings, timing",
			Task{Activity: []ActivityEntry{
				{Action: "build", Outcome: "FAILED"},
				{Action: "Error in step"},
				{Action: "WARN: slow", Outcome: "and failed"}, // both an error and a warning
				{Action: "[timing] build in 12ms"},
				{Action: "[Timing] merge took long in 3.5 ms"},
				{Action: "timing in 12ms"},                     // no [timing] tag
				{Action: "note", Outcome: "[timing] x in 5ms"}, // only the action counts for timing
			}},
			Signals{ErrorCount: 3, WarningCount: 1, TimingEntries: 2}},
		{"workflow statuses",
			Task{Workflow: []WorkflowStep{{Status: StepPassed}, {Status: StepPending}, {Status: StepFailed}, {Status: StepPassed}}},
			Signals{Workflow: WorkflowSummary{Total: 4, Passed: 2, Failed: 1, Pending: 1}}},
		{"review status is the latest verdict",
			Task{Reviews: []Review{
				{Verdict: "approved", Timestamp: day.Add(2 * time.Hour)},
				{Verdict: "changes-requested", Timestamp: day},
			}},
			Signals{ReviewStatus: "approved"}},
		{"equal review times: the later input wins",
			Task{Reviews: []Review{{Verdict: "approved"}, {Verdict: "changes-requested"}}},
			Signals{ReviewStatus: "changes-requested"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CollectSignals(&tt.task)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CollectSignals() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeterministicScores(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    Signals
		want Scores
	}{
		{"nothing known", Signals{},
			// wpr 50, review 50, commit 0, no timing.
			Scores{AgentPerformance: 40, TaskOutcomeQuality: 50, ProcessCompliance: 50}},
		{"perfect", Signals{Workflow: WorkflowSummary{Total: 3, Passed: 3}, CommitCount: 7, TimingEntries: 1, ReviewStatus: "Approved"},
			Scores{AgentPerformance: 100, TaskOutcomeQuality: 100, ProcessCompliance: 100}},
		{"review status set but not approved", Signals{Workflow: WorkflowSummary{Total: 1, Passed: 1}, ReviewStatus: "changes-requested"},
			// 50+21+0 = 71; 60+0+20 = 80; 50+21+10 = 81.
			Scores{AgentPerformance: 71, TaskOutcomeQuality: 80, ProcessCompliance: 81}},
		{"penalties cap and clamp at 0", Signals{Workflow: WorkflowSummary{Total: 2, Failed: 2}, ErrorCount: 9, WarningCount: 9},
			// ap 0+15+0-25 <0; tq 0+0+8 = 8; pc 0+15+10-60 <0.
			Scores{AgentPerformance: 0, TaskOutcomeQuality: 8, ProcessCompliance: 0}},
		{"thirds", Signals{Workflow: WorkflowSummary{Total: 3, Passed: 1}, CommitCount: 1},
			// wpr 33.33..: ap 16.67+15+3 = 34.67 -> 35; tq 20+3+20 = 43; pc 16.67+15+10 = 41.67 -> 42.
			Scores{AgentPerformance: 35, TaskOutcomeQuality: 43, ProcessCompliance: 42}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, DeterministicScores(tt.s)); diff != "" {
				t.Errorf("DeterministicScores(%+v) mismatch (-want +got):\n%s", tt.s, diff)
			}
		})
	}
}
