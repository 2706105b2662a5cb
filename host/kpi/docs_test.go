package kpi

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/assay-eval/assay/pkg/trace"
)

// guideMessageExpr is the message_expr docs/cel.md shows.
const guideMessageExpr = `"missing keywords; answer began: " + (size(turn.answer) > 80 ? turn.answer.substring(0, 80) : turn.answer)`

// TestGuideExamples compiles the expressions docs/cel.md shows, so the
// guide cannot drift from the environment.
func TestGuideExamples(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"size(turn.tool_calls) <= 6",
		`keywords_ratio(turn.answer, ["refund", "policy", "30 days"])`,
		guideMessageExpr,
		"turn.finalized && !turn.error",
		`in_order(turn.tools, ["memory_search", "finalize_response"])`,
		"size(state.tasks) - size(before.tasks) == 1",
		`state.tasks.exists(t, !(t.id in before.tasks.map(b, b.id)) && t.owner_persona == "qa-release-lead" && t.priority >= 7.0)`,
		`!turn.tools.exists(t, t.matches("^(delete|drop)_"))`,
		`turn.tool_calls.filter(c, c.name == "company_task_create").all(c, has(c.args.title) && has(c.args.due_at))`,
		"!turn.has_latency || turn.latency_s <= 30.0",
		"keywords_ratio(turn.answer, task.kpis.spec_keywords.map(k, string(k)))",
		`scorer.checks[?"task_created"].orValue(0.0) == 1.0`,
		`turn.events.all(e, e.type != "error")`,
		"double(turn.loop_iters) / 10.0 <= 1.0",
		"task.kpis.task_created == true",
		"lists.range(3).size() == 3",
		"turn.tools.sortBy(t, t).first().orValue('') != ''",
		"sets.intersects(turn.tools, ['a']) || sets.equivalent(turn.tools, ['b'])",
		"turn.tool_calls.transformList(i, c, c.name).size() >= 0",
		"math.round(math.sqrt(4.0)) == 2.0",
		"'%s-%d'.format(['a', 1]) == 'a-1'",
		"strings.quote(turn.answer) != ''",
		"count_tool(turn.tool_calls, 'x') == count_tool(turn.tools, 'x')",
		"mean([1, 2]) == 1.5 && sum([1.0]) == 1.0",
	} {
		if _, ds := NewChecker().Compile(src, TextPos("expr", src)); ds != nil {
			t.Errorf("Compile(%q) = %v, want no diagnostics", src, ds)
		}
	}
}

// TestGuideMessageExprEvaluates runs the guide's message_expr on a short and a
// long answer: an example that errors on short answers (substring past the
// end) would teach authors a message that silently falls back.
func TestGuideMessageExprEvaluates(t *testing.T) {
	t.Parallel()
	guide, err := os.ReadFile("../../docs/cel.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(guide), guideMessageExpr) {
		t.Fatalf("docs/cel.md does not show the message_expr %s", guideMessageExpr)
	}
	e, ds := NewChecker().Compile(guideMessageExpr, TextPos("expr", guideMessageExpr))
	if ds != nil {
		t.Fatalf("Compile(%q) = %v", guideMessageExpr, ds)
	}
	long := strings.Repeat("x", 100)
	for answer, want := range map[string]string{
		"short": "missing keywords; answer began: short",
		"":      "missing keywords; answer began: ",
		long:    "missing keywords; answer began: " + long[:80],
	} {
		act, err := NewActivation(nil, Input{Turn: &trace.Turn{Answer: answer}})
		if err != nil {
			t.Fatal(err)
		}
		v, _, err := e.EvalActual(context.Background(), act)
		if err != nil || v.Value() != want {
			t.Errorf("Eval(%q) on answer of %d characters = %v, %v, want %q", guideMessageExpr, len(answer), v, err, want)
		}
	}
}
