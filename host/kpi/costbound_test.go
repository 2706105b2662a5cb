package kpi

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/state"
	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/pkg/trace"
)

// costExprs are the expressions the cost property is checked over: every
// CEL check and message_expr of the bundled packs and the test fixtures'
// pack, the FuzzCompile seeds and corpus, and a few that exercise constant
// folding, literals and short-circuits.
func costExprs(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, path := range []string{"../../packs/example.yaml", "../../packs/support-desk.yaml",
		"../../packs/release-engineering.yaml", "../../testdata/fixtures/pack.yaml"} {
		p, ds := pack.Load(path, pack.Options{})
		if p == nil {
			t.Fatalf("Load(%q) = %v", path, ds)
		}
		for _, task := range p.Tasks {
			for _, c := range task.CEL {
				out = append(out, c.Expr)
				if c.MessageExpr != "" {
					out = append(out, c.MessageExpr)
				}
			}
		}
	}
	out = append(out, fuzzCompileSeeds...)
	corpus, err := filepath.Glob("testdata/fuzz/FuzzCompile/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range corpus {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if q, ok := strings.CutPrefix(line, "string("); ok {
				if s, err := strconv.Unquote(strings.TrimSuffix(q, ")")); err == nil {
					out = append(out, s)
				}
			}
		}
	}
	return append(out,
		"[1, 2, 3].map(x, x * 2)",
		`in_order(turn.tools, ["a", "b"])`,
		`["a", "b"].exists(k, turn.answer.contains(k))`,
		`{"a": 1}["a"] == 1`,
		"1 + 2 + 3 == 6",
		`"a" + "b" == "ab"`,
		"turn.finalized && size(turn.tool_calls) > 0",
		"!turn.finalized || size(turn.tools) > 1",
		"turn.answer.size() < 10 ? 1.0 : 0.5",
		`turn.tools.filter(t, t.startsWith("company")).size() > 1`,
		"turn.tool_calls.map(c, c.name)",
		`keywords_ratio(turn.answer, ["refund", "policy"])`,
		`turn.answer.split(" ").size() > 3`,
		`turn.answer.lowerAscii().contains("invoice")`,
		`state.tasks.exists(t, !(t.id in before.tasks.map(b, b.id)))`,
		`turn.events.exists(e, e.type == "done")`,
		`!turn.tools.exists(t, t.matches("^(delete|drop)_"))`,
		`turn.answer.matches("[Ii]nvoice") && "x" in ["x", "y"]`,
		`int("3") + int(turn.text_len) > 0`,
		`size(turn.tools) in [0, 1, 2, 3]`,
	)
}

// costInputs are turns to evaluate on: the fixture traces with and without
// their snapshots, a small hand-made turn and an empty one.
func costInputs(t *testing.T) map[string]Input {
	t.Helper()
	in := map[string]Input{"empty": {}, "small": {Turn: testTurn(), State: testState(), Label: "invoice"},
		"at the size bounds": {Turn: boundsTurn(), State: testState(), Before: testState(), Label: "invoice"}}
	traces, err := filepath.Glob("../../testdata/fixtures/traces/*.ndjson")
	if err != nil || len(traces) == 0 {
		t.Fatalf("no fixture traces: %v", err)
	}
	for _, path := range traces {
		tr, _, err := trace.ParseFile(path)
		if err != nil || tr == nil {
			t.Fatalf("ParseFile(%q) = %v", path, err)
		}
		name := strings.TrimSuffix(filepath.Base(path), ".ndjson")
		label, variant, _ := strings.Cut(name, ".")
		x := Input{Turn: tr, Label: label}
		in[name] = x
		before := "../../testdata/fixtures/state/" + label + ".before.json"
		after := "../../testdata/fixtures/state/" + label + "." + variant + ".after.json"
		if b, a := readSnapshot(before), readSnapshot(after); b != nil && a != nil {
			x.Before, x.State = b, a
			in[name+"+state"] = x
		}
	}
	return in
}

// boundsTurn is a turn as large as the estimate's sizes allow.
func boundsTurn() *trace.Turn {
	tr := &trace.Turn{Answer: strings.Repeat("invoice ", int(sizes["turn.answer"])/8), Finalized: true}
	for i := range sizes["turn.tool_calls"] {
		name := "company_task_create"
		if i%2 == 1 {
			name = "finalize_response"
		}
		tr.ToolCalls = append(tr.ToolCalls, trace.ToolCall{Name: name, Args: map[string]any{"title": "Invoice", "query": "x"}})
	}
	tr.Events = manyEvents(int(sizes["turn.events"]))
	return tr
}

func readSnapshot(path string) *companyos.Snapshot {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	s, _, ds := state.ReadFile(path)
	if ds.HasErrors() {
		return nil
	}
	return s
}

// TestEstimateBoundsActualCost (issue 12 item 10) is a property over every
// expression of costExprs and every input of costInputs: when the turn is
// within the sizes the estimate assumes, the actual cost of an evaluation
// that completes lies within the load-time estimate, Min <= actual <= Max,
// so that `assay cel eval` never prints a cost outside its estimate.
func TestEstimateBoundsActualCost(t *testing.T) {
	t.Parallel()
	c := NewChecker()
	inputs := costInputs(t)
	task := testTask()
	compiled := 0
	for _, src := range costExprs(t) {
		e, ds := c.Compile(src, TextPos("expr", src))
		if ds != nil {
			continue
		}
		compiled++
		for name, in := range inputs {
			act, err := NewActivation(task, in)
			if err != nil {
				t.Fatalf("NewActivation(%s) = %v", name, err)
			}
			if !act.Fits() {
				t.Fatalf("input %s does not fit the estimate's sizes", name)
			}
			_, actual, err := e.EvalActual(context.Background(), act)
			if err != nil {
				if actual > e.Estimate.Max {
					t.Errorf("%q on %s: erred with cost %d, over the estimate's max %d", src, name, actual, e.Estimate.Max)
				}
				continue
			}
			if actual < e.Estimate.Min || actual > e.Estimate.Max {
				t.Errorf("%q on %s: actual cost %d outside the estimate %d..%d", src, name, actual, e.Estimate.Min, e.Estimate.Max)
			}
		}
	}
	if compiled < 30 {
		t.Errorf("only %d expressions compiled; the property needs a real corpus", compiled)
	}
}
