package kpi

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/pkg/trace"
)

// cpuTime is the process's user+system CPU time. The benchmarks report it
// per operation next to wall time: on a shared, loaded machine wall time
// includes waiting for a CPU, CPU time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report adds wall and CPU time per operation in unit ("µs/expr", ...).
func report(b *testing.B, start time.Duration, unit string) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, unit)
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N)/1000, "cpu-"+unit)
}

// BenchmarkCompile measures compiling, type-checking, cost-estimating and
// planning one expression, as pack load does per check.
func BenchmarkCompile(b *testing.B) {
	for _, bc := range []struct{ name, src string }{
		{"one-clause", "size(turn.tool_calls) <= 8"},
		{"three-clause", "size(turn.tool_calls) <= 8 && turn.tools.exists(t, t == 'create_task') && keywords_ratio(turn.answer, ['invoice', 'due']) >= 0.5"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := NewChecker()
			if _, ds := c.Compile(bc.src, TextPos("expr", bc.src)); ds != nil {
				b.Fatal(ds)
			}
			start := cpuTime()
			for b.Loop() {
				c.Compile(bc.src, TextPos("expr", bc.src))
			}
			report(b, start, "µs/expr")
		})
	}
}

func benchEval(b *testing.B, src string, turn *trace.Turn) {
	b.Helper()
	c := NewChecker()
	e, ds := c.Compile(src, TextPos("expr", src))
	if ds != nil {
		b.Fatal(ds)
	}
	act, err := NewActivation(nil, Input{Turn: turn})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	v, _, err := e.Eval(ctx, act)
	if err != nil || v.Value() != true {
		b.Fatalf("Eval(%q) = %v, %v; want true", src, v, err)
	}
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		e.Eval(ctx, act)
	}
	report(b, start, "µs/eval")
}

// BenchmarkEvalThreeClause evaluates a three-clause check on one turn.
func BenchmarkEvalThreeClause(b *testing.B) {
	benchEval(b, "size(turn.tool_calls) <= 8 && turn.finalized && turn.answer.contains('Invoice')", testTurn())
}

// BenchmarkEval200ToolCalls evaluates a check over a turn's 200 tool calls.
func BenchmarkEval200ToolCalls(b *testing.B) {
	turn := testTurn()
	turn.ToolCalls = make([]trace.ToolCall, 200)
	for i := range turn.ToolCalls {
		turn.ToolCalls[i] = trace.ToolCall{Name: fmt.Sprintf("tool_%d", i%7), Args: map[string]any{"q": "x"}}
	}
	benchEval(b, "turn.tool_calls.all(c, c.name != 'delete_everything')", turn)
}

// BenchmarkEvaluateTask measures Set.Evaluate of a task with three checks,
// activation included: the cost per turn in a run.
func BenchmarkEvaluateTask(b *testing.B) {
	c := NewChecker()
	task := testTask(
		&pack.CELCheck{Name: "a", Expr: "size(turn.tool_calls) <= 8", Weight: 1},
		&pack.CELCheck{Name: "b", Expr: "in_order(turn.tools, ['memory_search', 'create_task'])", Weight: 1},
		&pack.CELCheck{Name: "c", Expr: "keywords_ratio(turn.answer, ['invoice', 'friday'])", Weight: 1},
	)
	if ds := c.CheckPack(&pack.Pack{Tasks: []*pack.Task{task}}); ds != nil {
		b.Fatal(ds)
	}
	set, in, ctx := c.Set(), Input{Turn: testTurn(), State: testState()}, context.Background()
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		set.Evaluate(ctx, task, in)
	}
	report(b, start, "µs/turn")
}

// BenchmarkCostUnit relates cost units to time: a large comprehension's
// actual cost against its run time.
func BenchmarkCostUnit(b *testing.B) {
	turn := testTurn()
	turn.Events = manyEvents(2000)
	src := "turn.events.all(e, e.type == 'runtime' && e.tool_name.contains('t'))"
	c := NewChecker()
	e, ds := c.Compile(src, TextPos("expr", src))
	if ds != nil {
		b.Fatal(ds)
	}
	act, _ := NewActivation(nil, Input{Turn: turn})
	_, cost, _ := e.EvalActual(context.Background(), act)
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		e.EvalActual(context.Background(), act)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(cost), "ns/cost-unit")
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N)/float64(cost), "cpu-ns/cost-unit")
}
