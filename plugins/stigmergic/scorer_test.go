package stigmergic

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

var (
	start   = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	oldNote = sdk.Note{At: "2026-02-27T08:00:00Z", Actor: "cto", Text: "kick-off: release checklist drafted"}
	newNote = sdk.Note{At: "2026-03-01T10:00:30Z", Actor: "qa-release-lead", Text: "Blocker found in the RELEASE pipeline; handing off to infra"}
)

func task(id string, notes ...sdk.Note) sdk.StateTask {
	return sdk.StateTask{ID: id, Title: "Release " + id, ContextNotes: notes}
}

type input struct {
	kpis          map[string]any
	before, after []sdk.StateTask
	noBefore      bool
	window        bool
	tools         []string
}

func newCase(t testing.TB, in input) *sdk.Case {
	t.Helper()
	c := &sdk.Case{ID: "c", Task: sdk.Task{Label: "leave_handoff_note", KPIs: gradetest.KPIs(t, in.kpis)}, StateAfter: &sdk.Snapshot{Tasks: in.after}}
	if !in.noBefore {
		c.StateBefore = &sdk.Snapshot{Tasks: in.before}
	}
	if in.window {
		c.StartedAt, c.FinishedAt = start, start.Add(time.Minute)
	}
	for _, name := range in.tools {
		c.Turn.ToolCalls = append(c.Turn.ToolCalls, sdk.ToolCall{Name: name, Args: map[string]any{}})
	}
	return c
}

func TestScore(t *testing.T) {
	t.Parallel()
	both := map[string]any{"note_written": true, "note_keywords": []string{"blocker", "release", "infra", "rollback"}}
	tests := []struct {
		name string
		in   input
		want gradetest.Want
	}{
		{
			name: "note added to an existing task",
			in:   input{kpis: both, before: []sdk.StateTask{task("t-1", oldNote)}, after: []sdk.StateTask{task("t-1", oldNote, newNote)}},
			want: gradetest.Want{Score: (1 + 0.75) / 2, Tags: []string{tag}, Checks: []check{
				{KPI: "note_written", Score: 1, Passed: true, Detail: "1 context note added on task t-1"},
				{KPI: "note_keywords", Score: 0.75, Tag: tag, Detail: "3 of 4 keywords found in the 1 context note added during the turn; missing keywords: rollback"},
			}},
		},
		{
			name: "notes already there are not new",
			in:   input{kpis: both, before: []sdk.StateTask{task("t-1", oldNote, newNote)}, after: []sdk.StateTask{task("t-1", oldNote, newNote)}},
			want: gradetest.Want{Tags: []string{tag}, Checks: []check{
				{KPI: "note_written", Tag: tag, Detail: `no context note was added to any task and no tool whose name contains "stigmergic" was called`},
				{KPI: "note_keywords", Tag: tag, Detail: "0 of 4 keywords found in the new context notes (none were added); missing keywords: blocker, release, infra, rollback"},
			}},
		},
		{
			name: "the same note on another task is new",
			in: input{
				kpis:   map[string]any{"note_written": true},
				before: []sdk.StateTask{task("t-1", newNote), task("t-2")},
				after:  []sdk.StateTask{task("t-1", newNote), task("t-2", newNote)},
			},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "note_written", Score: 1, Passed: true, Detail: "1 context note added on task t-2"}}},
		},
		{
			name: "a repeated note counts once more",
			in: input{
				kpis:   map[string]any{"note_keywords": []string{"blocker"}},
				before: []sdk.StateTask{task("t-1", newNote)},
				after:  []sdk.StateTask{task("t-1", newNote, newNote)},
			},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "note_keywords", Score: 1, Passed: true, Detail: "found every keyword in the 1 context note added during the turn: blocker"}}},
		},
		{
			name: "an edited note is new",
			in: input{
				kpis:   map[string]any{"note_written": true},
				before: []sdk.StateTask{task("t-1", oldNote)},
				after:  []sdk.StateTask{task("t-1", sdk.Note{At: oldNote.At, Actor: oldNote.Actor, Text: oldNote.Text + " (updated)"})},
			},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "note_written", Score: 1, Passed: true}}},
		},
		{
			name: "notes of a new task are new",
			in:   input{kpis: map[string]any{"note_written": true}, before: []sdk.StateTask{}, after: []sdk.StateTask{task("t-9", oldNote)}},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "note_written", Score: 1, Passed: true, Detail: "on task t-9"}}},
		},
		{
			name: "a stigmergic tool call counts",
			in:   input{kpis: map[string]any{"note_written": true}, before: []sdk.StateTask{task("t-1")}, after: []sdk.StateTask{task("t-1")}, tools: []string{"Company_Stigmergic_Note"}},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "note_written", Score: 1, Passed: true, Detail: "stigmergic tools called: Company_Stigmergic_Note"}}},
		},
		{
			name: "note_written false and none written",
			in:   input{kpis: map[string]any{"note_written": false}, before: []sdk.StateTask{task("t-1", oldNote)}, after: []sdk.StateTask{task("t-1", oldNote)}},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "note_written", Score: 1, Passed: true, Detail: "as wanted"}}},
		},
		{
			name: "note_written false but one written",
			in:   input{kpis: map[string]any{"note_written": false}, before: []sdk.StateTask{task("t-1")}, after: []sdk.StateTask{task("t-1", newNote)}},
			want: gradetest.Want{Tags: []string{tag}, Checks: []check{{KPI: "note_written", Tag: tag, Detail: "want none (note_written is false)"}}},
		},
		{
			name: "no before snapshot: notes within the turn's window",
			in: input{
				kpis: both, noBefore: true, window: true,
				after: []sdk.StateTask{task("t-1", oldNote, newNote, sdk.Note{At: "2026-03-01T11:00:00Z", Text: "rollback later"})},
			},
			want: gradetest.Want{Score: (1 + 0.75) / 2, Tags: []string{tag}, Checks: []check{
				{KPI: "note_written", Score: 1, Passed: true, Detail: "1 context note added on task t-1"},
				{KPI: "note_keywords", Score: 0.75, Tag: tag, Detail: "missing keywords: rollback"},
			}},
		},
		{
			name: "no before snapshot and no window",
			in:   input{kpis: map[string]any{"note_written": true}, noBefore: true, after: []sdk.StateTask{task("t-1", newNote)}},
			want: gradetest.Want{Tags: []string{tag}, Diag: "cannot tell new context notes from old", Checks: []check{{KPI: "note_written", Tag: tag}}},
		},
		{
			name: "unparseable note time",
			in:   input{kpis: map[string]any{"note_written": true}, noBefore: true, window: true, after: []sdk.StateTask{task("t-1", sdk.Note{At: "now", Text: "x"}, newNote)}},
			want: gradetest.Want{Score: 1, Diag: "context notes in state_after whose at is not an RFC 3339 time: 1", Checks: []check{{KPI: "note_written", Score: 1, Passed: true}}},
		},
		{
			name: "wrong types",
			in:   input{kpis: map[string]any{"note_written": "yes", "note_keywords": "blocker"}, before: []sdk.StateTask{}, after: []sdk.StateTask{}},
			want: gradetest.Want{Tags: []string{tag}, Diag: "kpi note_keywords: want a list of strings", Checks: []check{
				{KPI: "note_written", Tag: tag, Detail: "want true or false"},
				{KPI: "note_keywords", Tag: tag, Detail: "want a list of strings"},
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

func TestNoStateAfter(t *testing.T) {
	t.Parallel()
	c := newCase(t, input{kpis: map[string]any{"note_written": true}})
	c.StateAfter = nil
	got, err := New().Score(context.Background(), c)
	if err != nil {
		t.Fatalf("Score() error = %v", err)
	}
	gradetest.Compare(t, got, gradetest.Want{Tags: []string{tag}, Diag: "no state_after snapshot", Checks: []check{{KPI: "note_written", Tag: tag}}})
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	gradetest.CheckDescription(t, New(), "stigmergic",
		map[string]sdk.ValueType{"note_written": sdk.Bool, "note_keywords": sdk.StringList},
		map[string]string{"note_written": tag, "note_keywords": tag})
}

func TestConformance(t *testing.T) {
	sdktest.Run(t, New(), gradetest.Conformance(sdktest.Cases(New().Describe()),
		newCase(t, input{kpis: map[string]any{"note_written": true, "note_keywords": []string{"blocker"}},
			before: []sdk.StateTask{task("t-1", oldNote)}, after: []sdk.StateTask{task("t-1", oldNote, newNote)}}),
		newCase(t, input{kpis: map[string]any{"note_written": 3}, noBefore: true}),
	)...)
}
