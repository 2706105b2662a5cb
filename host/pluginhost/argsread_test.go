package pluginhost_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/pkg/trace"
	"github.com/assay-eval/assay/plugins/toolsequence"
)

// TestArgsReadSameInAndOutOfProcess scores cases with the real
// tool_sequence binary, which is sent only the tool-call arguments its
// tool_args values list (sdk.KPI.ArgsRead), and in process, where it is
// given every argument: the results must be identical. The cases mix
// listings (none, several tools, keys no call has, tools never called),
// arguments that are set, empty, null or missing, and unlisted keys and
// tools, in one batch.
func TestArgsReadSameInAndOutOfProcess(t *testing.T) {
	t.Parallel()
	listings := []string{
		"", // the task sets no tool_args
		`{"search":["query"],"create_task":["title","owner"]}`,
		`{"create_task":["title"],"update_task":["id","state"]}`,
		`{"memory_search":["query","scope"],"never_called":["x"]}`,
		`{}`,
	}
	argSets := []map[string]any{
		{"query": "invoice 7", "limit": 10.0, "owner": "ops"},
		{"query": "", "title": "Follow up", "owner": nil},
		{"title": "t", "owner": "ops", "id": "t1", "state": "done", "body": "long text"},
		{"scope": "company", "query": []any{"a", 1.0}, "nested": map[string]any{"k": "v"}},
		{},
		nil,
	}
	tools := []string{"search", "create_task", "update_task", "memory_search", "other"}
	var cases []*scorer.Case
	for i := range 40 {
		kpis := map[string]json.RawMessage{
			toolsequence.KeyContains: json.RawMessage(`["search","create_task"]`),
		}
		if l := listings[i%len(listings)]; l != "" {
			kpis[toolsequence.KeyArgs] = json.RawMessage(l)
		}
		c := &scorer.Case{ID: fmt.Sprintf("c%d", i), Task: scorer.Task{Label: fmt.Sprintf("task-%d", i%len(listings)), KPIs: kpis, ToolCatalog: tools}}
		for k := range i % 7 {
			c.Turn.ToolCalls = append(c.Turn.ToolCalls, trace.ToolCall{Name: tools[(i+k)%len(tools)], Args: argSets[(i*3+k)%len(argSets)]})
		}
		cases = append(cases, c)
	}
	got := scoreToolSequenceBothWays(t, cases)
	wrongArgs := 0
	for i := range cases {
		for _, ch := range got[i].Result.Checks {
			if ch.KPI == toolsequence.KeyArgs && !ch.Passed && len(ch.Evidence) > 0 {
				wrongArgs++
			}
		}
	}
	if wrongArgs == 0 {
		t.Errorf("no case failed %s with a tool named, want some: the cases do not exercise the listing", toolsequence.KeyArgs)
	}
}
