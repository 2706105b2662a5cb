package score

import (
	"testing"

	"github.com/assay-eval/assay/pkg/trace"
	"github.com/google/go-cmp/cmp"
)

func f64(v float64) *float64 { return &v }
func intp(v int) *int        { return &v }

func ev(typ, eventType string) trace.Event {
	return trace.Event{Type: typ, EventType: eventType}
}

func TestHostFailureTags(t *testing.T) {
	t.Parallel()
	finalized := func(mut func(*trace.Turn)) *trace.Turn {
		tr := &trace.Turn{Finalized: true}
		if mut != nil {
			mut(tr)
		}
		return tr
	}
	calls := func(n int) []trace.ToolCall { return make([]trace.ToolCall, n) }
	tests := []struct {
		name string
		in   TagInput
		want []string
	}{
		{"clean finalized turn", TagInput{Turn: finalized(nil)}, []string{}},
		{"not finalized", TagInput{Turn: &trace.Turn{}}, []string{TagFinalizeMissing}},
		{"no trace: only budget tags", TagInput{LatencyS: f64(91), MaxMeanLatencyS: f64(90)}, []string{TagLatencyOverBudget}},
		{
			"sub-agent spawned last, then finalized",
			TagInput{Turn: finalized(func(t *trace.Turn) {
				t.SubAgents = 1
				t.Events = []trace.Event{ev("runtime", "tool_end"), ev("sub_agent_spawned", ""), ev("final_answer", ""), ev("done", "")}
			})},
			[]string{TagHandoffPending},
		},
		{
			"sub-agent result came back as a tool_end",
			TagInput{Turn: finalized(func(t *trace.Turn) {
				t.SubAgents = 1
				t.Events = []trace.Event{ev("sub_agent_spawned", ""), ev("runtime_raw", "tool_end"), ev("done", "")}
			})},
			[]string{},
		},
		{
			"sub-agent result came back as a phase",
			TagInput{Turn: finalized(func(t *trace.Turn) {
				t.SubAgents = 1
				t.Events = []trace.Event{ev("sub_agent_spawned", ""), {Type: "phase", Phase: "merge"}, ev("done", "")}
			})},
			[]string{},
		},
		{
			"only the last sub-agent counts",
			TagInput{Turn: finalized(func(t *trace.Turn) {
				t.SubAgents = 2
				t.Events = []trace.Event{ev("sub_agent_spawned", ""), ev("sub_agent_result", ""), ev("sub_agent_spawned", ""), ev("done", "")}
			})},
			[]string{TagHandoffPending},
		},
		{
			"pending sub-agent but not finalized is finalize_missing only",
			TagInput{Turn: &trace.Turn{SubAgents: 1, Events: []trace.Event{ev("sub_agent_spawned", "")}}},
			[]string{TagFinalizeMissing},
		},
		{"latency at budget", TagInput{Turn: finalized(nil), LatencyS: f64(90), MaxMeanLatencyS: f64(90)}, []string{}},
		{"latency over budget", TagInput{Turn: finalized(nil), LatencyS: f64(90.001), MaxMeanLatencyS: f64(90)}, []string{TagLatencyOverBudget}},
		{"latency without a budget", TagInput{Turn: finalized(nil), LatencyS: f64(900)}, []string{}},
		{"cost at budget", TagInput{Turn: finalized(nil), CostUSD: f64(0.3), MaxMeanCostUSD: f64(0.1 + 0.2)}, []string{}},
		{"cost over budget", TagInput{Turn: finalized(nil), CostUSD: f64(0.31), MaxMeanCostUSD: f64(0.3)}, []string{TagCostOverBudget}},
		{"unknown cost", TagInput{Turn: finalized(nil), MaxMeanCostUSD: f64(0.3)}, []string{}},
		{"tool calls at the cap", TagInput{Turn: finalized(func(t *trace.Turn) { t.ToolCalls = calls(8) }), MaxToolCalls: intp(8)}, []string{}},
		{"tool calls over the cap", TagInput{Turn: finalized(func(t *trace.Turn) { t.ToolCalls = calls(9) }), MaxToolCalls: intp(8)}, []string{TagSafetyGateFailed}},
		{"requires human, no approval", TagInput{Turn: finalized(func(t *trace.Turn) { t.Phases = []string{"skill_dispatch"} }), RequiresHuman: true}, []string{TagSafetyGateFailed}},
		{"requires human, approved", TagInput{Turn: finalized(func(t *trace.Turn) { t.Phases = []string{"skill_dispatch", "human_review"} }), RequiresHuman: true}, []string{}},
		{"requires human, not finalized", TagInput{Turn: &trace.Turn{}, RequiresHuman: true}, []string{TagFinalizeMissing}},
		{
			"several at once, sorted, safety once",
			TagInput{
				Turn:            &trace.Turn{ToolCalls: calls(3)},
				LatencyS:        f64(120),
				MaxMeanLatencyS: f64(90),
				CostUSD:         f64(2),
				MaxMeanCostUSD:  f64(1),
				MaxToolCalls:    intp(2),
			},
			[]string{TagCostOverBudget, TagFinalizeMissing, TagLatencyOverBudget, TagSafetyGateFailed},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, HostFailureTags(tt.in)); diff != "" {
				t.Errorf("HostFailureTags(%+v) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestMergeTags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   [][]string
		want []string
	}{
		{nil, []string{}},
		{[][]string{{"b", "a"}, {"a", ""}, nil, {"c", "b"}}, []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, MergeTags(tt.in...)); diff != "" {
			t.Errorf("MergeTags(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}
