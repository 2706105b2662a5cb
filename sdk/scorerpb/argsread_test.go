package scorerpb_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// argsReadDesc is a scorer whose KPI "args" lists the arguments it reads.
func argsReadDesc(needs ...sdk.Need) sdk.Description {
	return sdk.Description{ID: "x", Version: "1", Needs: append([]sdk.Need{sdk.NeedTrace}, needs...), KPIs: []sdk.KPI{
		{Key: "plain", ValueType: sdk.StringList},
		{Key: "args", ValueType: sdk.StringListMap, ArgsRead: true},
	}}
}

// argsCase is a case whose task sets kpis (raw JSON values) and whose turn
// calls search, create_task and memory_search.
func argsCase(kpis map[string]string) *sdk.Case {
	task := sdk.Task{Label: "l", KPIs: map[string]json.RawMessage{}}
	for k, v := range kpis {
		task.KPIs[k] = json.RawMessage(v)
	}
	return &sdk.Case{ID: "c", Task: task, Turn: sdk.Turn{Answer: "a", ToolCalls: []sdk.ToolCall{
		{Name: "search", Args: map[string]any{"query": "invoice", "limit": 10.0, "owner": nil}},
		{Name: "create_task", Args: map[string]any{"title": "", "owner": "ops", "tags": []any{"a", 1.5}}},
		{Name: "memory_search", Args: map[string]any{"query": "m"}},
		{Name: "search", Args: map[string]any{"limit": 3.0}},
		{Name: "noop"},
	}}}
}

// TestProjectArgs checks which arguments a host sends a scorer that marks
// a KPI ArgsRead, and that MarshalCasesFor writes exactly the bytes
// MarshalCases writes for the projected case, which the plugin reads back
// as the projection.
func TestProjectArgs(t *testing.T) {
	t.Parallel()
	all := argsCase(nil).Turn.ToolCalls
	tests := []struct {
		name string
		d    sdk.Description
		kpis map[string]string
		want []map[string]any // each call's Args; nil: the case is sent unchanged
	}{
		{"listed keys of listed tools", argsReadDesc(), map[string]string{"args": `{"search":["query","owner"],"create_task":["title","missing"]}`},
			[]map[string]any{{"query": "invoice", "owner": nil}, {"title": ""}, nil, {}, nil}},
		{"every key listed", argsReadDesc(), map[string]string{"args": `{"create_task":["title","owner","tags"]}`},
			[]map[string]any{nil, {"title": "", "owner": "ops", "tags": []any{"a", 1.5}}, nil, nil, nil}},
		{"repeated keys and tools listed once", argsReadDesc(), map[string]string{"args": ` {"search":["query","query"],"memory_search":[]}`},
			[]map[string]any{{"query": "invoice"}, nil, {}, {}, nil}},
		// More than maxScanned tools: found in the listing's map, not by scan.
		{"many tools listed", argsReadDesc(), map[string]string{"args": `{"t1":["a"],"t2":["a"],"t3":["a"],"t4":["a"],"search":["query"],"t5":["a"],"t6":["a"],"t7":["a"],"t8":["a"],"memory_search":["query"]}`},
			[]map[string]any{{"query": "invoice"}, nil, {"query": "m"}, {}, nil}},
		{"eight tools listed", argsReadDesc(), map[string]string{"args": `{"t1":["a"],"t2":["a"],"t3":["a"],"search":["query"],"t5":["a"],"t6":["a"],"t7":["a"],"memory_search":["query"]}`},
			[]map[string]any{{"query": "invoice"}, nil, {"query": "m"}, {}, nil}},
		{"null keys", argsReadDesc(), map[string]string{"args": `{"search":null}`},
			[]map[string]any{{}, nil, nil, {}, nil}},
		{"task sets no listing key", argsReadDesc(), map[string]string{"plain": `["search"]`},
			[]map[string]any{nil, nil, nil, nil, nil}},
		{"two listing keys together", sdk.Description{ID: "x", KPIs: []sdk.KPI{
			{Key: "a", ValueType: sdk.StringListMap, ArgsRead: true}, {Key: "b", ValueType: sdk.StringListMap, ArgsRead: true}}},
			map[string]string{"a": `{"search":["query"]}`, "b": `{"search":["limit"],"memory_search":["query"]}`},
			[]map[string]any{{"query": "invoice", "limit": 10.0}, nil, {"query": "m"}, {"limit": 3.0}, nil}},
		// Every argument is sent when a listing cannot be read, or there is none.
		{"listing not an object", argsReadDesc(), map[string]string{"args": `["search"]`}, nil},
		{"listing null", argsReadDesc(), map[string]string{"args": `null`}, nil},
		{"listing of the wrong shape", argsReadDesc(), map[string]string{"args": `{"search":"query"}`}, nil},
		{"no KPI marked", sdk.Description{ID: "x", KPIs: []sdk.KPI{{Key: "args", ValueType: sdk.StringListMap}}},
			map[string]string{"args": `{"search":["query"]}`}, nil},
		{"marked KPI not a string_list_map", sdk.Description{ID: "x", KPIs: []sdk.KPI{{Key: "args", ValueType: sdk.Any, ArgsRead: true}}},
			map[string]string{"args": `{"search":["query"]}`}, nil},
		{"no_tool_args sends none anyway", argsReadDesc(sdk.NeedNoToolArgs), map[string]string{"args": `{"search":["query"]}`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := argsCase(tt.kpis)
			got := scorerpb.ProjectArgs(tt.d, c)
			if tt.want == nil {
				if got != c {
					t.Fatalf("ProjectArgs() = a copy, want the case itself")
				}
			} else {
				var args []map[string]any
				for i, tc := range got.Turn.ToolCalls {
					if tc.Name != all[i].Name {
						t.Errorf("ProjectArgs() call %d is %q, want %q", i, tc.Name, all[i].Name)
					}
					args = append(args, tc.Args)
				}
				if diff := cmp.Diff(tt.want, args); diff != "" {
					t.Errorf("ProjectArgs() arguments (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(all, c.Turn.ToolCalls); diff != "" {
					t.Errorf("ProjectArgs() changed the case it was given (-was +is):\n%s", diff)
				}
			}
			// Three cases, so the batch's listings are read once and reused.
			want, err := scorerpb.MarshalCases(nil, []*sdk.Case{got, got, got})
			if err != nil {
				t.Fatal(err)
			}
			b, err := scorerpb.MarshalCasesFor(nil, tt.d, []*sdk.Case{c, c, c})
			if err != nil {
				t.Fatalf("MarshalCasesFor() error = %v", err)
			}
			if string(b) != string(want) {
				t.Fatalf("MarshalCasesFor() differs from MarshalCases(ProjectArgs())")
			}
			dec, err := scorerpb.UnmarshalCases(b)
			if err != nil {
				t.Fatalf("UnmarshalCases(MarshalCasesFor()) error = %v", err)
			}
			for i, tc := range dec[2].Turn.ToolCalls {
				want := got.Turn.ToolCalls[i].Args
				if len(want) == 0 && len(tc.Args) == 0 {
					continue // nil and empty: the same to a scorer
				}
				if diff := cmp.Diff(want, tc.Args); diff != "" {
					t.Errorf("call %d as the plugin reads it (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

// TestMarshalCasesForEscapes checks the arguments AppendArgs leaves to
// encoding/json (keys and values that need escaping, other Go types): the
// listed ones are written as AppendArgs writes a map of just them.
func TestMarshalCasesForEscapes(t *testing.T) {
	t.Parallel()
	d := argsReadDesc()
	for _, args := range []map[string]any{
		{"a<b": "x", "c": 1.0, "d": 2.0},
		{"a": "x\"y\n", "c": 1.0, "d": 2.0},
		{"a": "ünï", "c": []any{map[string]any{"k": "<v>"}}, "d": 2.0},
		{"a": int64(7), "c": struct{ X int }{3}, "d": 2.0},
	} {
		c := &sdk.Case{ID: "c", Task: sdk.Task{KPIs: map[string]json.RawMessage{"args": json.RawMessage(`{"t":["a","a<b","c"]}`)}},
			Turn: sdk.Turn{ToolCalls: []sdk.ToolCall{{Name: "t", Args: args}}}}
		want, err := scorerpb.MarshalCases(nil, []*sdk.Case{scorerpb.ProjectArgs(d, c)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := scorerpb.MarshalCasesFor(nil, d, []*sdk.Case{c})
		if err != nil {
			t.Fatalf("MarshalCasesFor(%v) error = %v", args, err)
		}
		if string(got) != string(want) {
			t.Errorf("MarshalCasesFor(%v) = %q, want %q", args, got, want)
		}
	}
}
