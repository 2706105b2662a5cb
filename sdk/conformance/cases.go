package conformance

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/assay-eval/assay/sdk"
)

// Cases builds generic cases for d: an empty turn with no state, a turn
// with tool calls and an answer against non-empty snapshots, the same turn
// against empty snapshots, and an errored turn that did not finalize. Each
// task sets every KPI key d declares to a plausible value of its type.
func Cases(d sdk.Description) []*sdk.Case {
	kpis := map[string]json.RawMessage{}
	for _, k := range d.KPIs {
		kpis[k.Key] = sampleValue(k.ValueType)
	}
	task := func(label string, withKPIs bool) sdk.Task {
		t := sdk.Task{Label: label, Persona: "ops", Prompt: "file the invoice task", ToolCatalog: []string{"search", "create_task", "memory_search"}}
		if withKPIs {
			t.KPIs = kpis
		}
		return t
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	prio := 2.0
	before := &sdk.Snapshot{Tasks: []sdk.StateTask{{ID: "t0", Title: "old", State: "open", CreatedAt: "2026-01-01T00:00:00Z"}}}
	after := &sdk.Snapshot{
		Tasks: []sdk.StateTask{
			{ID: "t0", Title: "old", State: "open", CreatedAt: "2026-01-01T00:00:00Z"},
			{ID: "t1", Title: "Invoice search", Specification: "search the invoice", State: "open", OwnerPersona: "ops",
				Priority: &prio, DueAt: "2026-01-09T00:00:00Z", CreatedAt: "2026-01-02T03:04:06Z",
				ContextNotes: []sdk.Note{{At: "2026-01-02T03:04:07Z", Actor: "ops", Text: "invoice search started"}}},
		},
		Memory: []sdk.MemoryEntry{{ID: "m1", Scope: "company", Title: "Invoices", Body: "invoice search procedures and quarterly billing", Tags: []string{"billing"}}},
	}
	empty := &sdk.Snapshot{}
	answer := "I searched the invoice records and created a task for the quarterly billing review. Thank you."
	busy := sdk.Turn{
		Events: []sdk.Event{
			{Line: 1, Type: "phase", Phase: "skill_dispatch"},
			{Line: 2, Type: "runtime", EventType: "tool_start", ToolName: "search"},
			{Line: 3, Type: "runtime", EventType: "tool_end", ToolName: "search"},
			{Line: 4, Type: "runtime", EventType: "tool_start", ToolName: "create_task"},
			{Line: 5, Type: "runtime", EventType: "tool_end", ToolName: "create_task"},
			{Line: 6, Type: "done"},
		},
		ToolCalls: []sdk.ToolCall{
			{Name: "search", Args: map[string]any{"query": "invoice", "limit": 10.0}},
			{Name: "create_task", Args: map[string]any{"title": "Invoice search", "priority": 2.0}},
		},
		ToolEvents: 4, Answer: answer, StreamedText: answer, TextLen: len(answer), Finalized: true,
		Phases: []string{"skill_dispatch"}, LoopIters: 1, TaskID: "t1", TaskAction: "created",
	}
	failed := sdk.Turn{
		Events: []sdk.Event{{Line: 1, Type: "error"}}, Error: true, ErrorMessages: []string{"upstream timeout"},
	}
	upstream := []sdk.Upstream{{Scorer: "tool_sequence", Result: sdk.Result{Score: 0.5, Checks: []sdk.Check{{KPI: "tool_sequence_contains", Score: 0.5, Detail: "1 of 2"}}}}}
	cases := []*sdk.Case{
		{ID: "empty", Task: task("empty", false)},
		{ID: "tools", Task: task("tools", true), Turn: busy, StartedAt: start, FinishedAt: start.Add(5 * time.Second),
			StateBefore: before, StateAfter: after, Upstream: upstream},
		{ID: "tools_empty_state", Task: task("tools_empty_state", true), Turn: busy, StartedAt: start, FinishedAt: start.Add(5 * time.Second),
			StateBefore: empty, StateAfter: empty, Upstream: upstream},
		{ID: "errored", Task: task("errored", true), Turn: failed, StateBefore: before, StateAfter: before},
	}
	return cases
}

func sampleValue(t sdk.ValueType) json.RawMessage {
	switch t {
	case sdk.Bool:
		return json.RawMessage(`true`)
	case sdk.Number:
		return json.RawMessage(`1.5`)
	case sdk.Integer:
		return json.RawMessage(`3`)
	case sdk.String:
		return json.RawMessage(`"ops"`)
	case sdk.StringList:
		return json.RawMessage(`["search","invoice"]`)
	case sdk.StringListMap:
		return json.RawMessage(`{"search":["query"]}`)
	default:
		return json.RawMessage(fmt.Sprintf("%q", "any"))
	}
}
