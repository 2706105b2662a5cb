package toolsequence

import (
	"context"
	"testing"

	"github.com/assay-eval/assay/plugins/internal/gradetest"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/sdktest"
)

type check = gradetest.Check

const wantMissing, tagArgs = "tool_missing", "tool_wrong_args"

// call is a tool call with arguments given as alternating keys and values.
func call(name string, kv ...any) sdk.ToolCall {
	args := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		args[kv[i].(string)] = kv[i+1]
	}
	return sdk.ToolCall{Name: name, Args: args}
}

func newCase(t testing.TB, kpis map[string]any, catalog []string, calls ...sdk.ToolCall) *sdk.Case {
	t.Helper()
	return &sdk.Case{
		ID:   "c",
		Task: sdk.Task{Label: "tools", KPIs: gradetest.KPIs(t, kpis), ToolCatalog: catalog},
		Turn: sdk.Turn{ToolCalls: calls, Answer: "done"},
	}
}

func TestScore(t *testing.T) {
	t.Parallel()
	catalog := []string{"search", "validate-delivery", "create_task"}
	tests := []struct {
		name    string
		kpis    map[string]any
		catalog []string
		calls   []sdk.ToolCall
		want    gradetest.Want
	}{
		{
			name:  "contains all",
			kpis:  map[string]any{"tool_sequence_contains": []string{"validate-delivery", "search"}},
			calls: []sdk.ToolCall{call("search"), call("validate-delivery")},
			want:  gradetest.Want{Score: 1, Checks: []check{{KPI: "tool_sequence_contains", Score: 1, Passed: true, Detail: "called every required tool: validate-delivery, search"}}},
		},
		{
			name:  "contains partial credit",
			kpis:  map[string]any{"tool_sequence_contains": []string{"validate-delivery", "search", "create_task", "report"}},
			calls: []sdk.ToolCall{call("search"), call("search"), call("create_task")},
			want: gradetest.Want{Score: 0.5, Tags: []string{wantMissing}, Checks: []check{{KPI: "tool_sequence_contains", Score: 0.5, Tag: wantMissing,
				Detail: "2 of 4 required tools called; missing tools: validate-delivery, report (called [search, search, create_task])"}}},
		},
		{
			name:  "contains is case-sensitive on tool names",
			kpis:  map[string]any{"tool_sequence_contains": []string{"Search"}},
			calls: []sdk.ToolCall{call("search")},
			want:  gradetest.Want{Tags: []string{wantMissing}, Checks: []check{{KPI: "tool_sequence_contains", Tag: wantMissing, Detail: "missing tools: Search"}}},
		},
		{
			name:  "exact match",
			kpis:  map[string]any{"tool_sequence_exact": []string{"search", "create_task"}},
			calls: []sdk.ToolCall{call("search"), call("create_task")},
			want:  gradetest.Want{Score: 1, Checks: []check{{KPI: "tool_sequence_exact", Score: 1, Passed: true}}},
		},
		{
			name:  "exact with an extra call fails",
			kpis:  map[string]any{"tool_sequence_exact": []string{"search", "create_task"}},
			calls: []sdk.ToolCall{call("search"), call("search"), call("create_task")},
			want: gradetest.Want{Tags: []string{wantMissing}, Checks: []check{{KPI: "tool_sequence_exact", Tag: wantMissing,
				Detail: "called [search, search, create_task], want exactly [search, create_task]"}}},
		},
		{
			name: "exact empty list wants no calls",
			kpis: map[string]any{"tool_sequence_exact": []string{}},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "tool_sequence_exact", Score: 1, Passed: true, Detail: "called no tools"}}},
		},
		{
			name:  "in order with calls between",
			kpis:  map[string]any{"tool_sequence_in_order": []string{"search", "create_task"}},
			calls: []sdk.ToolCall{call("search"), call("validate-delivery"), call("create_task")},
			want:  gradetest.Want{Score: 1, Checks: []check{{KPI: "tool_sequence_in_order", Score: 1, Passed: true}}},
		},
		{
			name:  "out of order",
			kpis:  map[string]any{"tool_sequence_in_order": []string{"search", "create_task"}},
			calls: []sdk.ToolCall{call("create_task"), call("search")},
			want: gradetest.Want{Tags: []string{wantMissing}, Checks: []check{{KPI: "tool_sequence_in_order", Tag: wantMissing,
				Detail: "create_task not called after [search]"}}},
		},
		{
			name:    "no hallucinated tools",
			kpis:    map[string]any{"no_hallucinated_tool_key": true},
			catalog: catalog,
			calls:   []sdk.ToolCall{call("search"), call("create_task")},
			want:    gradetest.Want{Score: 1, Checks: []check{{KPI: "no_hallucinated_tool_key", Score: 1, Passed: true, Detail: "every tool called is in the tool_catalog (2 calls)"}}},
		},
		{
			name:    "hallucinated tool",
			kpis:    map[string]any{"no_hallucinated_tool_key": true},
			catalog: catalog,
			calls:   []sdk.ToolCall{call("search"), call("delete_everything"), call("delete_everything")},
			want: gradetest.Want{Tags: []string{wantMissing}, Checks: []check{{KPI: "no_hallucinated_tool_key", Tag: wantMissing,
				Detail: "called tools not in the catalog: delete_everything"}}},
		},
		{
			name:  "no catalog is a diagnostic",
			kpis:  map[string]any{"no_hallucinated_tool_key": true},
			calls: []sdk.ToolCall{call("search")},
			want: gradetest.Want{Tags: []string{wantMissing}, Checks: []check{{KPI: "no_hallucinated_tool_key", Tag: wantMissing, Detail: "no tool_catalog"}},
				Diag: "the task has no tool_catalog"},
		},
		{
			name:    "hallucination wanted (false)",
			kpis:    map[string]any{"no_hallucinated_tool_key": false},
			catalog: catalog,
			calls:   []sdk.ToolCall{call("search")},
			want:    gradetest.Want{Tags: []string{wantMissing}, Checks: []check{{KPI: "no_hallucinated_tool_key", Tag: wantMissing, Detail: "want some outside it"}}},
		},
		{
			name:  "tool args all present",
			kpis:  map[string]any{"tool_args": map[string][]string{"search": {"query"}, "create_task": {"title", "priority"}}},
			calls: []sdk.ToolCall{call("search", "query", "x"), call("create_task", "title", "T", "priority", 7), call("search", "query", "y", "limit", 3)},
			want:  gradetest.Want{Score: 1, Checks: []check{{KPI: "tool_args", Score: 1, Passed: true, Detail: "every listed tool was called with its required argument keys: create_task, search"}}},
		},
		{
			name: "tool args partial credit",
			kpis: map[string]any{"tool_args": map[string][]string{
				"search": {"query"}, "create_task": {"title", "priority"}, "validate-delivery": {"target"}, "report": {"to"},
			}},
			calls: []sdk.ToolCall{call("search", "query", "x"), call("search"), call("create_task", "title", "T", "priority", nil), call("validate-delivery", "target", "prod")},
			want: gradetest.Want{Score: 0.25, Tags: []string{tagArgs}, Checks: []check{{KPI: "tool_args", Score: 0.25, Tag: tagArgs,
				Detail: "1 of 4 listed tools called with their required argument keys; call 1 of create_task lacks priority; report was not called; call 2 of search lacks query"}}},
		},
		{
			name:  "tool args empty string counts as missing",
			kpis:  map[string]any{"tool_args": map[string][]string{"search": {"query"}}},
			calls: []sdk.ToolCall{call("search", "query", "")},
			want:  gradetest.Want{Tags: []string{tagArgs}, Checks: []check{{KPI: "tool_args", Tag: tagArgs, Detail: "call 1 of search lacks query"}}},
		},
		{
			name: "every key, mean of checks",
			kpis: map[string]any{
				"tool_sequence_contains":   []string{"search", "create_task"},
				"tool_sequence_exact":      []string{"search", "create_task"},
				"tool_sequence_in_order":   []string{"search", "create_task"},
				"no_hallucinated_tool_key": true,
				"tool_args":                map[string][]string{"create_task": {"title"}},
			},
			catalog: catalog,
			calls:   []sdk.ToolCall{call("search", "query", "q")},
			want: gradetest.Want{Score: (0.5 + 0 + 0 + 1 + 0) / 5, Tags: []string{wantMissing, tagArgs}, Checks: []check{
				{KPI: "tool_sequence_contains", Score: 0.5, Tag: wantMissing},
				{KPI: "tool_sequence_exact", Tag: wantMissing},
				{KPI: "tool_sequence_in_order", Tag: wantMissing},
				{KPI: "no_hallucinated_tool_key", Score: 1, Passed: true},
				{KPI: "tool_args", Tag: tagArgs, Detail: "create_task was not called"},
			}},
		},
		{
			name:  "wrong types",
			kpis:  map[string]any{"tool_sequence_contains": "search", "tool_args": map[string]any{"search": "query"}, "no_hallucinated_tool_key": "yes"},
			calls: []sdk.ToolCall{call("search", "query", "q")},
			want: gradetest.Want{Tags: []string{wantMissing, tagArgs}, Checks: []check{
				{KPI: "tool_sequence_contains", Tag: wantMissing, Detail: "want a list of strings"},
				{KPI: "no_hallucinated_tool_key", Tag: wantMissing, Detail: "want true or false"},
				{KPI: "tool_args", Tag: tagArgs, Detail: `want a map of lists of strings, got a string ("query") for "search"`},
			}, Diag: "kpi tool_args: want a map of lists of strings"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := New().Score(context.Background(), newCase(t, tt.kpis, tt.catalog, tt.calls...))
			if err != nil {
				t.Fatalf("Score() error = %v", err)
			}
			gradetest.Compare(t, got, tt.want)
		})
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	gradetest.CheckDescription(t, New(), "tool_sequence",
		map[string]sdk.ValueType{
			"tool_sequence_contains": sdk.StringList, "tool_sequence_exact": sdk.StringList, "tool_sequence_in_order": sdk.StringList,
			"no_hallucinated_tool_key": sdk.Bool, "tool_args": sdk.StringListMap,
		},
		map[string]string{
			"tool_sequence_contains": wantMissing, "tool_sequence_exact": wantMissing, "tool_sequence_in_order": wantMissing,
			"no_hallucinated_tool_key": wantMissing, "tool_args": tagArgs,
		})
}

func TestConformance(t *testing.T) {
	sdktest.Run(t, New(), gradetest.Conformance(sdktest.Cases(New().Describe()),
		newCase(t, map[string]any{"tool_sequence_contains": []string{"search", "x"}, "tool_args": map[string][]string{"search": {"q"}}},
			[]string{"search"}, call("search", "q", 1), call("y")),
		newCase(t, map[string]any{"tool_sequence_exact": 3, "no_hallucinated_tool_key": true}, nil, call("search")),
	)...)
}
