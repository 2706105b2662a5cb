package taskstate

import (
	"context"
	"testing"
	"time"

	"github.com/assay-eval/assay/plugins/internal/gradetest"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/sdktest"
)

type check = gradetest.Check

const tag = "state_not_changed"

func prio(p float64) *float64 { return &p }

var (
	start  = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	finish = start.Add(2 * time.Minute)
	old    = sdk.StateTask{ID: "t-1", Title: "Quarterly review", State: "open", OwnerPersona: "cto", Priority: prio(3), CreatedAt: "2026-02-01T09:00:00Z"}
	good   = sdk.StateTask{
		ID: "t-2", Title: "Investigate build", Specification: "The production build blocker. Acceptance: green pipeline.",
		State: "open", OwnerPersona: "qa-release-lead", Priority: prio(8), DueAt: "2026-03-05T00:00:00Z", CreatedAt: "2026-03-01T10:01:00Z",
	}
	weak = sdk.StateTask{
		ID: "t-3", Title: "Investigate build", Specification: "look at it", State: "open", OwnerPersona: "cto",
		Priority: prio(5), CreatedAt: "2026-03-01T10:01:30Z",
	}
	release = map[string]any{
		"task_created": true, "assigned_to": "qa-release-lead", "has_due_at": true, "priority_min": 7,
		"spec_keywords": []string{"production", "build", "blocker", "acceptance"},
	}
)

type input struct {
	kpis          map[string]any
	before, after []sdk.StateTask
	noBefore      bool // no state_before snapshot
	noAfter       bool // no state_after snapshot
	window        bool // the case knows its start and finish
	taskID        string
}

func newCase(t testing.TB, in input) *sdk.Case {
	t.Helper()
	c := &sdk.Case{
		ID:   "c",
		Task: sdk.Task{Label: "task_create_release_blocker", KPIs: gradetest.KPIs(t, in.kpis)},
		Turn: sdk.Turn{TaskID: in.taskID, Answer: "created"},
	}
	if !in.noBefore {
		c.StateBefore = &sdk.Snapshot{Tasks: in.before}
	}
	if !in.noAfter {
		c.StateAfter = &sdk.Snapshot{Tasks: in.after}
	}
	if in.window {
		c.StartedAt, c.FinishedAt = start, finish
	}
	return c
}

func TestScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   input
		want gradetest.Want
	}{
		{
			name: "created task meets every KPI",
			in:   input{kpis: release, before: []sdk.StateTask{old}, after: []sdk.StateTask{old, good}},
			want: gradetest.Want{Score: 1, Checks: []check{
				{KPI: "task_created", Score: 1, Passed: true, Detail: "task 'Investigate build' (t-2) was created during the turn"},
				{KPI: "assigned_to", Score: 1, Passed: true},
				{KPI: "has_due_at", Score: 1, Passed: true, Detail: "is due at 2026-03-05T00:00:00Z"},
				{KPI: "priority_min", Score: 1, Passed: true, Detail: "has priority 8, want >= 7"},
				{KPI: "spec_keywords", Score: 1, Passed: true, Detail: "found every keyword in the title and specification of task 'Investigate build' (t-2): production, build, blocker, acceptance"},
			}},
		},
		{
			name: "weak task: partial credit and actionable details",
			in:   input{kpis: release, before: []sdk.StateTask{old}, after: []sdk.StateTask{old, weak}},
			want: gradetest.Want{Score: (1 + 0 + 0 + 0 + 0.25) / 5, Tags: []string{tag}, Checks: []check{
				{KPI: "task_created", Score: 1, Passed: true},
				{KPI: "assigned_to", Tag: tag, Detail: `task 'Investigate build' (t-3) is owned by "cto" and checked out by nobody, want "qa-release-lead"`},
				{KPI: "has_due_at", Tag: tag, Detail: "task 'Investigate build' (t-3) has no due_at, want one"},
				{KPI: "priority_min", Tag: tag, Detail: "task 'Investigate build' (t-3) has priority 5, want >= 7"},
				{KPI: "spec_keywords", Score: 0.25, Tag: tag, Detail: "missing keywords: production, blocker, acceptance"},
			}},
		},
		{
			name: "assigned through checked_out_by, any case; state after",
			in: input{
				kpis:   map[string]any{"assigned_to": "QA-Release-Lead", "task_state_after": "In_Progress"},
				before: []sdk.StateTask{},
				after:  []sdk.StateTask{{ID: "t-9", Title: "Ship", OwnerPersona: "cto", CheckedOutBy: "qa-release-lead", State: "in_progress"}},
			},
			want: gradetest.Want{Score: 1, Checks: []check{
				{KPI: "assigned_to", Score: 1, Passed: true},
				{KPI: "task_state_after", Score: 1, Passed: true},
			}},
		},
		{
			name: "wrong state and missing priority",
			in: input{
				kpis:   map[string]any{"task_state_after": "done", "priority_min": 1},
				before: []sdk.StateTask{},
				after:  []sdk.StateTask{{ID: "t-9", Title: "Ship", State: "open"}},
			},
			want: gradetest.Want{Tags: []string{tag}, Checks: []check{
				{KPI: "priority_min", Tag: tag, Detail: "task 'Ship' (t-9) has no priority, want >= 1"},
				{KPI: "task_state_after", Tag: tag, Detail: `task 'Ship' (t-9) is in state "open", want "done"`},
			}},
		},
		{
			name: "has_due_at false wants none",
			in: input{
				kpis:   map[string]any{"has_due_at": false},
				before: []sdk.StateTask{},
				after:  []sdk.StateTask{good},
			},
			want: gradetest.Want{Tags: []string{tag}, Checks: []check{{KPI: "has_due_at", Tag: tag, Detail: "want no due_at (has_due_at is false)"}}},
		},
		{
			name: "no target task: every check 0",
			in:   input{kpis: release, before: []sdk.StateTask{old}, after: []sdk.StateTask{old}},
			want: gradetest.Want{Tags: []string{tag}, Checks: []check{
				{KPI: "task_created", Tag: tag, Detail: "no task was created: every task in state_after was already in state_before; the trace names no task_id"},
				{KPI: "assigned_to", Tag: tag, Detail: "no target task"},
				{KPI: "has_due_at", Tag: tag, Detail: "no target task"},
				{KPI: "priority_min", Tag: tag, Detail: "no target task"},
				{KPI: "spec_keywords", Tag: tag, Detail: "no target task"},
			}},
		},
		{
			name: "task_created false and none created",
			in:   input{kpis: map[string]any{"task_created": false}, before: []sdk.StateTask{old}, after: []sdk.StateTask{old}},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "task_created", Score: 1, Passed: true, Detail: "no task was created, as wanted"}}},
		},
		{
			name: "task_created false but one created",
			in:   input{kpis: map[string]any{"task_created": false}, before: []sdk.StateTask{old}, after: []sdk.StateTask{old, weak}},
			want: gradetest.Want{Tags: []string{tag}, Checks: []check{{KPI: "task_created", Tag: tag, Detail: "(t-3) was created during the turn, want none"}}},
		},
		{
			name: "several candidates: the best match wins",
			in:   input{kpis: release, before: []sdk.StateTask{old}, after: []sdk.StateTask{weak, old, good}},
			want: gradetest.Want{Score: 1, Checks: []check{
				{KPI: "task_created", Score: 1, Passed: true},
				{KPI: "assigned_to", Score: 1, Passed: true, Detail: "(best match of 2 candidate tasks: t-3, t-2)"},
				{KPI: "has_due_at", Score: 1, Passed: true, Detail: "(t-2)"},
				{KPI: "priority_min", Score: 1, Passed: true},
				{KPI: "spec_keywords", Score: 1, Passed: true},
			}},
		},
		{
			name: "several candidates: a tie goes to the earliest",
			in: input{
				kpis:   map[string]any{"priority_min": 5},
				before: []sdk.StateTask{},
				after:  []sdk.StateTask{{ID: "a", Priority: prio(1)}, {ID: "b", Priority: prio(5)}, {ID: "c", Priority: prio(9)}},
			},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "priority_min", Score: 1, Passed: true, Detail: "task b has priority 5, want >= 5"}}},
		},
		{
			name: "no before snapshot: matched by the turn's window",
			in: input{
				kpis: map[string]any{"task_created": true, "priority_min": 7}, noBefore: true, window: true,
				after: []sdk.StateTask{old, weak, good, {ID: "late", Priority: prio(9), CreatedAt: "2026-03-01T10:05:00Z"}},
			},
			want: gradetest.Want{Score: 1, Checks: []check{
				{KPI: "task_created", Score: 1, Passed: true, Detail: "(t-3) was created during the turn"},
				{KPI: "priority_min", Score: 1, Passed: true, Detail: "task 'Investigate build' (t-2) has priority 8, want >= 7 (best match of 2 candidate tasks: t-3, t-2)"},
			}},
		},
		{
			name: "no before snapshot, nothing in the window: task_id of an existing task",
			in: input{
				kpis: map[string]any{"task_created": true, "task_state_after": "open"}, noBefore: true, window: true,
				after: []sdk.StateTask{old}, taskID: "t-1",
			},
			want: gradetest.Want{Score: 0.5, Tags: []string{tag}, Checks: []check{
				{KPI: "task_created", Tag: tag, Detail: "no task was created; the turn names existing task 'Quarterly review' (t-1)"},
				{KPI: "task_state_after", Score: 1, Passed: true},
			}},
		},
		{
			name: "no before snapshot, no window: the task_id task counts as created",
			in: input{
				kpis: map[string]any{"task_created": true, "priority_min": 7}, noBefore: true,
				after: []sdk.StateTask{old, good}, taskID: "t-2",
			},
			want: gradetest.Want{Score: 1, Checks: []check{
				{KPI: "task_created", Score: 1, Passed: true},
				{KPI: "priority_min", Score: 1, Passed: true},
			}},
		},
		{
			name: "no before snapshot, no window, no task_id",
			in:   input{kpis: map[string]any{"task_created": false}, noBefore: true, after: []sdk.StateTask{old, good}},
			want: gradetest.Want{Tags: []string{tag}, Checks: []check{
				{KPI: "task_created", Tag: tag, Detail: "cannot tell whether a task was created: no state_before snapshot and no turn start or finish time"},
			}},
		},
		{
			name: "task_id not in state_after",
			in:   input{kpis: map[string]any{"assigned_to": "cto"}, before: []sdk.StateTask{old}, after: []sdk.StateTask{old}, taskID: "t-404"},
			want: gradetest.Want{Tags: []string{tag}, Checks: []check{{KPI: "assigned_to", Tag: tag, Detail: `the trace's task_id "t-404" is not in state_after`}}},
		},
		{
			name: "no state_after snapshot",
			in:   input{kpis: map[string]any{"task_created": true, "assigned_to": "cto"}, noAfter: true},
			want: gradetest.Want{Tags: []string{tag}, Diag: "no state_after snapshot", Checks: []check{
				{KPI: "task_created", Tag: tag}, {KPI: "assigned_to", Tag: tag, Detail: "no target task: no state_after snapshot"},
			}},
		},
		{
			name: "unparseable created_at is a diagnostic",
			in: input{
				kpis: map[string]any{"task_created": true}, noBefore: true, window: true,
				after: []sdk.StateTask{{ID: "x", CreatedAt: "yesterday"}, good},
			},
			want: gradetest.Want{Score: 1, Diag: `tasks in state_after whose created_at is not an RFC 3339 time: 1 (first: task x: "yesterday")`,
				Checks: []check{{KPI: "task_created", Score: 1, Passed: true}}},
		},
		{
			name: "wrong types",
			in: input{
				kpis:   map[string]any{"task_created": "yes", "priority_min": "high", "assigned_to": 3, "spec_keywords": []string{"build"}},
				before: []sdk.StateTask{}, after: []sdk.StateTask{good},
			},
			want: gradetest.Want{Score: 0.25, Tags: []string{tag}, Diag: "kpi priority_min: want a number, got a string (\"high\")", Checks: []check{
				{KPI: "task_created", Tag: tag, Detail: "want true or false"},
				{KPI: "assigned_to", Tag: tag, Detail: "want a string, got a number (3)"},
				{KPI: "priority_min", Tag: tag, Detail: "want a number"},
				{KPI: "spec_keywords", Score: 1, Passed: true},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := New().Score(context.Background(), newCase(t, tt.in))
			if err != nil {
				t.Fatalf("Score() error = %v", err)
			}
			gradetest.Compare(t, got, tt.want)
		})
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	gradetest.CheckDescription(t, New(), "task_state",
		map[string]sdk.ValueType{
			"task_created": sdk.Bool, "assigned_to": sdk.String, "has_due_at": sdk.Bool,
			"priority_min": sdk.Number, "spec_keywords": sdk.StringList, "task_state_after": sdk.String,
		},
		map[string]string{
			"task_created": tag, "assigned_to": tag, "has_due_at": tag,
			"priority_min": tag, "spec_keywords": tag, "task_state_after": tag,
		})
}

func TestConformance(t *testing.T) {
	sdktest.Run(t, New(), gradetest.Conformance(sdktest.Cases(New().Describe()),
		newCase(t, input{kpis: release, before: []sdk.StateTask{old}, after: []sdk.StateTask{weak, old, good}}),
		newCase(t, input{kpis: release, noBefore: true, window: true, after: []sdk.StateTask{old, good}}),
		newCase(t, input{kpis: map[string]any{"priority_min": "x"}, noAfter: true}),
	)...)
}
