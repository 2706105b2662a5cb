package pack

import (
	"github.com/assay-eval/assay/pkg/scorer"
)

// testCatalog is the six built-in scorers' KPI declarations as the brief
// lists them; plugins/builtin is the real source, built concurrently.
func testCatalog() map[scorer.ID]scorer.Description {
	kpi := func(k string, t scorer.ValueType) scorer.KPI { return scorer.KPI{Key: k, ValueType: t} }
	state := []scorer.Need{scorer.NeedStateBefore, scorer.NeedStateAfter, scorer.NeedTrace}
	descs := []scorer.Description{
		{ID: "task_state", Version: "1", Needs: state, KPIs: []scorer.KPI{
			kpi("task_created", scorer.Bool), kpi("assigned_to", scorer.String), kpi("has_due_at", scorer.Bool),
			kpi("priority_min", scorer.Number), kpi("spec_keywords", scorer.StringList), kpi("task_state_after", scorer.String)}},
		{ID: "memory_grounding", Version: "1", Needs: []scorer.Need{scorer.NeedTrace, scorer.NeedAnswer, scorer.NeedStateAfter}, KPIs: []scorer.KPI{
			kpi("memory_tool_called", scorer.Bool), kpi("grounded_in_memory", scorer.Bool), kpi("min_overlap", scorer.Integer),
			kpi("memory_tools", scorer.StringList), kpi("answer_keywords", scorer.StringList)}},
		{ID: "tool_sequence", Version: "1", Needs: []scorer.Need{scorer.NeedTrace}, KPIs: []scorer.KPI{
			kpi("tool_sequence_contains", scorer.StringList), kpi("tool_sequence_exact", scorer.StringList),
			kpi("tool_sequence_in_order", scorer.StringList), kpi("no_hallucinated_tool_key", scorer.Bool),
			kpi("tool_args", scorer.StringListMap)}},
		{ID: "stigmergic", Version: "1", Needs: state, KPIs: []scorer.KPI{
			kpi("note_written", scorer.Bool), kpi("note_keywords", scorer.StringList)}},
		{ID: "answer_keywords", Version: "1", Needs: []scorer.Need{scorer.NeedAnswer}, KPIs: []scorer.KPI{
			kpi("answer_keywords", scorer.StringList), kpi("min_answer_length", scorer.Integer)}},
		{ID: "composite", Version: "1", Needs: []scorer.Need{scorer.NeedUpstream}},
	}
	out := make(map[scorer.ID]scorer.Description, len(descs))
	for _, d := range descs {
		out[d.ID] = d
	}
	return out
}

// bundledPacks are the packs shipped in packs/.
var bundledPacks = []string{
	"../../packs/example.yaml",
	"../../packs/support-desk.yaml",
	"../../packs/release-engineering.yaml",
}
