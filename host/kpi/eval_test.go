package kpi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/trace"
)

// testTurn is a small finalized turn with three tool calls.
func testTurn() *trace.Turn {
	return &trace.Turn{
		Answer:    "Created the Invoice task for Bob, due Friday.",
		Finalized: true,
		ToolCalls: []trace.ToolCall{
			{Name: "memory_search", Args: map[string]any{"query": "invoice"}},
			{Name: "create_task", Args: map[string]any{"title": "Invoice", "priority": 2.0}},
			{Name: "finalize_response", Args: map[string]any{}},
		},
		ToolEvents: 6,
		Phases:     []string{"skill_dispatch", "task_action"},
		Events: []trace.Event{
			{Line: 1, Type: "phase", Phase: "skill_dispatch"},
			{Line: 2, Type: "runtime", EventType: "tool_start", ToolName: "memory_search"},
			{Line: 3, Type: "done"},
		},
		LoopIters: 2,
	}
}

func testState() *companyos.Snapshot {
	p := 3.0
	return &companyos.Snapshot{
		Tasks: []companyos.Task{{ID: "t1", Title: "Invoice", Specification: "Send the ACME invoice", State: "todo",
			OwnerPersona: "finance", Priority: &p,
			ContextNotes: []companyos.Note{{Actor: "agent", Text: "picked up"}}}},
		Memory: []companyos.MemoryEntry{{ID: "m1", Title: "ACME", Body: "ACME pays net 30", Tags: []string{"billing"}}},
	}
}

func testTask(checks ...*pack.CELCheck) *pack.Task {
	return &pack.Task{Label: "invoice", Persona: "finance", Scorer: "task_state", Weight: 2,
		SliceTags: []string{"billing"}, KPIs: map[string]any{"priority_min": 2.0, "spec_keywords": []any{"invoice"}},
		CEL: checks}
}

// compileTask compiles checks as CheckPack would, failing the test on any
// diagnostic.
func compileTask(t *testing.T, c *Checker, checks ...*pack.CELCheck) (*Set, *pack.Task) {
	t.Helper()
	for _, cc := range checks {
		if cc.Weight == 0 {
			cc.Weight = 1
		}
	}
	task := testTask(checks...)
	p := &pack.Pack{Path: "p.yaml", Tasks: []*pack.Task{task}}
	if ds := c.CheckPack(p); len(ds) != 0 {
		t.Fatalf("CheckPack = %v, want no diagnostics", ds)
	}
	return c.Set(), task
}

func latency(f float64) *float64 { return &f }

func TestEvaluate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		check pack.CELCheck
		want  Result
	}{
		{"bool true", pack.CELCheck{Name: "few", Expr: "size(turn.tool_calls) <= 8 && turn.finalized"},
			Result{Name: "few", Score: 1, Passed: true, Weight: 1}},
		{"bool false with message and tag",
			pack.CELCheck{Name: "none", Expr: "size(turn.tool_calls) == 0", Message: "used tools", FailureTag: "tool_missing"},
			Result{Name: "none", Score: 0, Passed: false, Weight: 1, Detail: "used tools", FailureTag: "tool_missing"}},
		{"bool false without message", pack.CELCheck{Name: "err", Expr: "turn.error"},
			Result{Name: "err", Weight: 1, Detail: "check was false"}},
		{"message_expr evaluated", pack.CELCheck{Name: "m", Expr: "size(turn.tools) > 5", Message: "plain",
			MessageExpr: "'only ' + string(size(turn.tools)) + ' tools: ' + turn.tools.join(',')"},
			Result{Name: "m", Weight: 1, Detail: "only 3 tools: memory_search,create_task,finalize_response"}},
		{"double partial credit passes", pack.CELCheck{Name: "kw", Expr: "keywords_ratio(turn.answer, ['invoice', 'bob', 'acme', 'friday'])"},
			Result{Name: "kw", Score: 0.75, Passed: true, Weight: 1}},
		{"double below half fails", pack.CELCheck{Name: "kw", Expr: "keywords_ratio(turn.answer, ['invoice', 'qqq', 'www', 'zzz'])", Message: "few keywords"},
			Result{Name: "kw", Score: 0.25, Weight: 1, Detail: "few keywords"}},
		{"weight kept", pack.CELCheck{Name: "w", Expr: "turn.finalized", Weight: 3},
			Result{Name: "w", Score: 1, Passed: true, Weight: 3}},
		{"task variable", pack.CELCheck{Name: "t", Expr: "task.label == 'invoice' && task.kpis.priority_min == 2.0 && 'billing' in task.tags && task.weight == 2.0"},
			Result{Name: "t", Score: 1, Passed: true, Weight: 1}},
		{"state and before", pack.CELCheck{Name: "s", Expr: "size(state.tasks) > size(before.tasks) && state.tasks.exists(t, t.priority >= 3.0 && t.context_notes.exists(n, n.text.contains('picked')))"},
			Result{Name: "s", Score: 1, Passed: true, Weight: 1}},
		{"memory", pack.CELCheck{Name: "mem", Expr: "state.memory.exists(m, 'billing' in m.tags && m.body.contains('net 30'))"},
			Result{Name: "mem", Score: 1, Passed: true, Weight: 1}},
		{"scorer variable", pack.CELCheck{Name: "sc", Expr: "scorer.score >= 0.5 && scorer.checks['task_created'] == 1.0"},
			Result{Name: "sc", Score: 1, Passed: true, Weight: 1}},
		{"latency and cost", pack.CELCheck{Name: "lat", Expr: "turn.has_latency && turn.latency_s < 30.0 && !turn.has_cost && turn.cost_usd == 0.0"},
			Result{Name: "lat", Score: 1, Passed: true, Weight: 1}},
		{"label and persona from input", pack.CELCheck{Name: "lp", Expr: "turn.label == 'invoice-1' && turn.persona == 'finance'"},
			Result{Name: "lp", Score: 1, Passed: true, Weight: 1}},
		{"events and args", pack.CELCheck{Name: "ev", Expr: "turn.events.exists(e, e.event_type == 'tool_start' && e.tool_name == 'memory_search' && e.line == 2) && turn.tool_calls[1].args.title == 'Invoice'"},
			Result{Name: "ev", Score: 1, Passed: true, Weight: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cc := tt.check
			set, task := compileTask(t, NewChecker(), &cc)
			got := set.Evaluate(context.Background(), task, Input{
				Turn: testTurn(), Label: "invoice-1", LatencyS: latency(12.5), State: testState(),
				ScorerScore: 0.8, ScorerChecks: map[string]float64{"task_created": 1},
			})
			if len(got) != 1 {
				t.Fatalf("Evaluate(%q) = %d results, want 1", cc.Expr, len(got))
			}
			if got[0].Cost == 0 {
				t.Errorf("Evaluate(%q).Cost = 0, want the actual cost", cc.Expr)
			}
			if diff := cmp.Diff(tt.want, got[0], cmpopts.IgnoreFields(Result{}, "Cost")); diff != "" {
				t.Errorf("Evaluate(%q) mismatch (-want +got):\n%s", cc.Expr, diff)
			}
		})
	}
}

// TestEvaluateRuntimeErrors checks that each kind of run-time error scores 0
// with the error as detail, and that the turn's other checks still run.
func TestEvaluateRuntimeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		expr   string
		limits Limits
		detail string // substring of Detail
		is     error  // when set, errors.Is(Err, is)
	}{
		{name: "division by zero", expr: "10 / (size(turn.tools) - 3) > 1", detail: "division by zero"},
		{name: "modulus by zero", expr: "10 % (size(turn.tools) - 3) == 1", detail: "modulus by zero"},
		{name: "missing map key", expr: "task.kpis['nope'] == 1", detail: "no such key: nope"},
		{name: "missing map field", expr: "scorer.checks.absent > 0.5", detail: "no such key: absent"},
		{name: "index out of range", expr: "turn.tools[7] == 'x'", detail: "index out of bounds: 7"},
		{name: "dyn type mismatch", expr: "task.kpis.priority_min + 'x' == 'y'", detail: "no such overload"},
		{name: "double above one", expr: "double(size(turn.tools))", detail: "outside [0,1]: 3", is: ErrOutOfRange},
		{name: "double below zero", expr: "-0.5", detail: "outside [0,1]: -0.5", is: ErrOutOfRange},
		{name: "double NaN", expr: "0.0 / 0.0", detail: "outside [0,1]: NaN", is: ErrOutOfRange},
		{name: "mean of empty list", expr: "mean(turn.events.filter(e, e.type == 'nope').map(e, 1.0))", detail: "mean of an empty list", is: ErrEmptyMean},
		{name: "integer overflow in sum", expr: "sum([9223372036854775807, 1]) > 0", detail: "integer overflow", is: ErrIntOverflow},
		{name: "cost limit", expr: "turn.events.all(e, e.line > 0)",
			limits: Limits{Estimate: 1 << 40, Eval: 50, Turn: 1 << 40}, detail: "cost limit exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := NewChecker()
			if tt.limits != (Limits{}) {
				c = NewChecker(WithLimits(tt.limits))
			}
			failing := &pack.CELCheck{Name: "bad", Expr: tt.expr, FailureTag: "tool_missing", Message: "m"}
			after := &pack.CELCheck{Name: "after", Expr: "turn.finalized"}
			set, task := compileTask(t, c, failing, after)
			in := Input{Turn: testTurn()}
			in.Turn.Events = manyEvents(500)
			got := set.Evaluate(context.Background(), task, in)
			if len(got) != 2 {
				t.Fatalf("Evaluate(%q) = %d results, want 2", tt.expr, len(got))
			}
			r := got[0]
			if r.Err == nil || r.Score != 0 || r.Passed || r.FailureTag != "" {
				t.Errorf("Evaluate(%q)[0] = %+v, want an error scoring 0 without failure tag", tt.expr, r)
			}
			if !strings.Contains(r.Detail, tt.detail) {
				t.Errorf("Evaluate(%q)[0].Detail = %q, want it to contain %q", tt.expr, r.Detail, tt.detail)
			}
			if tt.is != nil && !errors.Is(r.Err, tt.is) {
				t.Errorf("Evaluate(%q)[0].Err = %v, want errors.Is %v", tt.expr, r.Err, tt.is)
			}
			if !got[1].Passed || got[1].Err != nil {
				t.Errorf("Evaluate(%q)[1] = %+v, want the next check to pass", tt.expr, got[1])
			}
		})
	}
}

func manyEvents(n int) []trace.Event {
	ev := make([]trace.Event, n)
	for i := range ev {
		ev[i] = trace.Event{Line: i + 1, Type: "runtime", EventType: "tool_start", ToolName: "t"}
	}
	return ev
}

func TestEvaluateTurnBudget(t *testing.T) {
	t.Parallel()
	expr := "turn.events.all(e, e.line > 0)"
	in := Input{Turn: testTurn()}
	in.Turn.Events = manyEvents(200)
	checks := func() []*pack.CELCheck {
		return []*pack.CELCheck{{Name: "a", Expr: expr}, {Name: "b", Expr: expr}, {Name: "c", Expr: "turn.finalized"}}
	}
	// Measure one check's cost, then allow a little more than one check:
	// b still starts (budget left), c finds it spent.
	set, task := compileTask(t, NewChecker(), checks()...)
	one := set.Evaluate(context.Background(), task, in)[0].Cost
	if one < 200 {
		t.Fatalf("check cost %d, want at least 200 for the test to mean anything", one)
	}
	set, task = compileTask(t, NewChecker(WithLimits(Limits{Estimate: 1 << 40, Eval: 1 << 20, Turn: one + 1})), checks()...)
	got := set.Evaluate(context.Background(), task, in)
	var errs []string
	for _, r := range got {
		if r.Err != nil {
			errs = append(errs, r.Name+": "+r.Detail)
		}
	}
	want := []string{"c: turn CEL budget exhausted"}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("Evaluate errors mismatch (-want +got):\n%s", diff)
	}
	if !errors.Is(got[2].Err, ErrBudget) {
		t.Errorf("Evaluate()[2].Err = %v, want ErrBudget", got[2].Err)
	}
}

func TestEvaluateCancelled(t *testing.T) {
	t.Parallel()
	c := NewChecker(WithLimits(Limits{Estimate: 1 << 40, Eval: 1 << 40, Turn: 1 << 40}))
	set, task := compileTask(t, c, &pack.CELCheck{Name: "slow", Expr: "turn.events.all(e, turn.events.exists(f, f.line >= e.line))"})
	in := Input{Turn: testTurn()}
	in.Turn.Events = manyEvents(3000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := set.Evaluate(ctx, task, in)
	if got[0].Err == nil || !strings.Contains(got[0].Detail, "cancel") {
		t.Errorf("Evaluate(cancelled) = %+v, want an interruption error", got[0])
	}
}

func TestEvaluateUnknownTask(t *testing.T) {
	t.Parallel()
	set, _ := compileTask(t, NewChecker(), &pack.CELCheck{Name: "a", Expr: "true"})
	if got := set.Evaluate(context.Background(), &pack.Task{Label: "other"}, Input{}); got != nil {
		t.Errorf("Evaluate(other task) = %v, want nil", got)
	}
}

func TestEvaluateNilInputs(t *testing.T) {
	t.Parallel()
	set, task := compileTask(t, NewChecker(), &pack.CELCheck{Name: "a",
		Expr: "size(turn.tools) == 0 && size(state.tasks) == 0 && size(scorer.checks) == 0 && turn.answer == ''"})
	got := set.Evaluate(context.Background(), task, Input{})
	if !got[0].Passed {
		t.Errorf("Evaluate(empty input) = %+v, want pass", got[0])
	}
}

func TestCheckPackStoresSetOnlyWhenValid(t *testing.T) {
	t.Parallel()
	c := NewChecker()
	good := &pack.Pack{Tasks: []*pack.Task{testTask(&pack.CELCheck{Name: "a", Expr: "true", Weight: 1})}}
	if ds := c.CheckPack(good); ds != nil {
		t.Fatalf("CheckPack(good) = %v, want nil", ds)
	}
	if c.Set() == nil || c.Set().Len("invoice") != 1 {
		t.Fatalf("Set() after a valid pack = %v, want one check for invoice", c.Set())
	}
	bad := &pack.Pack{Tasks: []*pack.Task{testTask(&pack.CELCheck{Name: "a", Expr: "1 +", Weight: 1,
		ExprPos: pack.ScalarPos{Pos: diag.Pos{File: "p.yaml", Line: 3, Col: 5}}})}}
	if ds := c.CheckPack(bad); !ds.HasErrors() {
		t.Fatalf("CheckPack(bad) = %v, want errors", ds)
	}
	if c.Set() != nil {
		t.Errorf("Set() after an invalid pack = %v, want nil", c.Set())
	}
}

// TestEvaluateOversizedInput checks both run-time paths: a turn within the
// estimate's size bounds runs untracked and is charged the estimate; a
// larger one runs tracked and hits the run-time limit.
func TestEvaluateOversizedInput(t *testing.T) {
	t.Parallel()
	expr := "turn.events.all(e, e.line > 0)"
	probe, ds := NewChecker().Compile(expr, TextPos("expr", expr))
	if ds != nil {
		t.Fatal(ds)
	}
	limits := Limits{Estimate: probe.Estimate.Max, Eval: probe.Estimate.Max, Turn: 1 << 40}
	tests := []struct {
		name     string
		events   int
		wantErr  bool
		wantCost func(uint64) bool
	}{
		{"fits: charged the estimate", 2000, false, func(c uint64) bool { return c == probe.Estimate.Max }},
		{"small and fits", 10, false, func(c uint64) bool { return c == probe.Estimate.Max }},
		{"too many events: tracked, limit fires", 20000, true, func(c uint64) bool { return c > probe.Estimate.Max }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			set, task := compileTask(t, NewChecker(WithLimits(limits)), &pack.CELCheck{Name: "a", Expr: expr})
			in := Input{Turn: testTurn()}
			in.Turn.Events = manyEvents(tt.events)
			r := set.Evaluate(context.Background(), task, in)[0]
			if (r.Err != nil) != tt.wantErr || !tt.wantCost(r.Cost) {
				t.Errorf("Evaluate(%d events) = %+v, want error %v and a matching cost (estimate %d)", tt.events, r, tt.wantErr, probe.Estimate.Max)
			}
			if tt.wantErr && !strings.Contains(r.Detail, "cost limit exceeded") {
				t.Errorf("Evaluate(%d events).Detail = %q, want the cost limit", tt.events, r.Detail)
			}
		})
	}
}

func TestFits(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", defaultStringSize+1)
	tests := []struct {
		name string
		edit func(*Turn, *Task, *companyos.Snapshot)
		want bool
	}{
		{"test inputs fit", func(*Turn, *Task, *companyos.Snapshot) {}, true},
		{"long tool name", func(tu *Turn, _ *Task, _ *companyos.Snapshot) {
			tu.ToolCalls = []trace.ToolCall{{Name: long}}
		}, false},
		{"long nested arg", func(tu *Turn, _ *Task, _ *companyos.Snapshot) {
			tu.ToolCalls = []trace.ToolCall{{Name: "a", Args: map[string]any{"x": []any{map[string]any{"y": long}}}}}
		}, false},
		{"long kpi value", func(_ *Turn, k *Task, _ *companyos.Snapshot) { k.KPIs = map[string]any{"k": long} }, false},
		{"answer within its own bound", func(tu *Turn, _ *Task, _ *companyos.Snapshot) { tu.Answer = long }, true},
		{"too many tasks", func(_ *Turn, _ *Task, s *companyos.Snapshot) { s.Tasks = make([]companyos.Task, 201) }, false},
		{"long note", func(_ *Turn, _ *Task, s *companyos.Snapshot) {
			s.Tasks[0].ContextNotes = []companyos.Note{{Text: long}}
		}, false},
		{"long memory body within bound", func(_ *Turn, _ *Task, s *companyos.Snapshot) { s.Memory[0].Body = long }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tu := &Turn{Events: testTurn().Events, ToolCalls: testTurn().ToolCalls}
			k := &Task{Label: "t", KPIs: map[string]any{"a": []any{"b"}}}
			s := testState()
			tt.edit(tu, k, s)
			if got := fitsEstimate(tu, k, &Scorer{}, s, &companyos.Snapshot{}, nil); got != tt.want {
				t.Errorf("fitsEstimate(%s) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

// TestEvaluateConcurrent runs one Set from many goroutines, as verify's
// worker pool does (meaningful under -race).
func TestEvaluateConcurrent(t *testing.T) {
	t.Parallel()
	set, task := compileTask(t, NewChecker(),
		&pack.CELCheck{Name: "a", Expr: "turn.finalized"},
		&pack.CELCheck{Name: "b", Expr: "keywords_ratio(turn.answer, ['invoice'])"},
		&pack.CELCheck{Name: "c", Expr: "size(turn.tools) > 5", MessageExpr: "'tools: ' + turn.tools.join(',')"})
	state := testState()
	done := make(chan []Result)
	for i := 0; i < 8; i++ {
		go func() {
			in := Input{Turn: testTurn(), State: state, Before: state}
			if i%2 == 1 {
				in.Turn.Events = manyEvents(3000) // does not fit: the tracked programs
			}
			done <- set.Evaluate(context.Background(), task, in)
		}()
	}
	for i := 0; i < 8; i++ {
		got := <-done
		if len(got) != 3 || !got[0].Passed || got[1].Score != 1 || got[2].Detail != "tools: memory_search,create_task,finalize_response" {
			t.Errorf("Evaluate (concurrent) = %+v", got)
		}
	}
}

func TestNilSet(t *testing.T) {
	t.Parallel()
	var s *Set
	if got := s.Evaluate(context.Background(), testTask(), Input{}); got != nil || s.Len("invoice") != 0 {
		t.Errorf("nil Set: Evaluate = %v, Len = %d; want nil, 0", got, s.Len("invoice"))
	}
}

// TestCheckPackSharesAlikeChecks: tasks whose checks are defined alike
// (positions aside) evaluate to their own definitions' names, weights,
// messages and failure tags, and share one compiled check; a check that
// differs in any one of them is compiled on its own.
func TestCheckPackSharesAlikeChecks(t *testing.T) {
	t.Parallel()
	base := pack.CELCheck{Name: "a", Expr: "false", Message: "m", Weight: 1, FailureTag: "tag"}
	variants := []func(c *pack.CELCheck){
		func(c *pack.CELCheck) {},
		func(c *pack.CELCheck) { c.Name = "b" },
		func(c *pack.CELCheck) { c.Expr = "0.25" },
		func(c *pack.CELCheck) { c.Message = "other" },
		func(c *pack.CELCheck) { c.MessageExpr = "'expr'" },
		func(c *pack.CELCheck) { c.Weight = 2 },
		func(c *pack.CELCheck) { c.FailureTag = "other_tag" },
		func(c *pack.CELCheck) {},
		func(c *pack.CELCheck) {},
	}
	p := &pack.Pack{Path: "p.yaml"}
	for i, v := range variants {
		c := base
		v(&c)
		c.Pos = diag.Pos{File: "p.yaml", Line: 10 * i, Col: 5} // where each is written differs
		second := pack.CELCheck{Name: "z", Expr: "true", Weight: 1, Pos: diag.Pos{File: "p.yaml", Line: 10*i + 5}}
		p.Tasks = append(p.Tasks, &pack.Task{Label: fmt.Sprintf("t%d", i), CEL: []*pack.CELCheck{&c, &second}})
	}
	c := NewChecker()
	if ds := c.CheckPack(p); len(ds) != 0 {
		t.Fatalf("CheckPack = %v, want no diagnostics", ds)
	}
	set := c.Set()
	for _, tk := range p.Tasks {
		got := set.Evaluate(context.Background(), tk, Input{Turn: testTurn()})
		var want []Result
		for _, cc := range tk.CEL {
			r := Result{Name: cc.Name, Weight: cc.Weight, Score: 1, Passed: true}
			switch cc.Expr {
			case "false":
				r.Score, r.Passed, r.FailureTag, r.Detail = 0, false, cc.FailureTag, cc.Message
			case "0.25":
				r.Score, r.Passed, r.FailureTag, r.Detail = 0.25, false, cc.FailureTag, cc.Message
			}
			if cc.MessageExpr != "" && !r.Passed {
				r.Detail = "expr"
			}
			want = append(want, r)
		}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Result{}, "Cost")); diff != "" {
			t.Errorf("Evaluate(%s) (-definition +got):\n%s", tk.Label, diff)
		}
	}
	first, n := set.checksOf(p.Tasks[0]), len(variants)
	if a, b := set.checksOf(p.Tasks[n-2]), set.checksOf(p.Tasks[n-1]); &a[0] != &b[0] || a[0] != first[0] {
		t.Errorf("the last two tasks, with t0's checks, hold two lists of them or other compiled checks, want one list of t0's")
	}
	for i := 1; i < n-2; i++ {
		other := set.checksOf(p.Tasks[i])
		if other[0] == first[0] {
			t.Errorf("task t%d's first check differs from t0's but shares its compiled check", i)
		}
		if other[1] != first[1] {
			t.Errorf("task t%d's second check is t0's, compiled again, want it shared", i)
		}
	}
}

// TestEvaluateVariablesConvertedOnRead: the variables are converted when
// an expression first reads them and kept for the turn's later checks; a
// check reading one variable after another reading a different one gets
// its own. It fails if a variable's converted value is kept in another's
// place or read before it is converted.
func TestEvaluateVariablesConvertedOnRead(t *testing.T) {
	t.Parallel()
	set, task := compileTask(t, NewChecker(),
		&pack.CELCheck{Name: "scorer", Expr: "scorer.score >= 0.5"},
		&pack.CELCheck{Name: "turn", Expr: "turn.label == 'invoice-1' && turn.finalized"},
		&pack.CELCheck{Name: "state", Expr: "size(state.tasks) > size(before.tasks)"},
		&pack.CELCheck{Name: "task", Expr: "task.label == 'invoice' && task.weight == 2.0"},
		&pack.CELCheck{Name: "all", Expr: "turn.persona == 'finance' && task.kpis.priority_min == 2.0 && size(before.tasks) < size(state.tasks) && scorer.checks['task_created'] == 1.0"},
		&pack.CELCheck{Name: "again", Expr: "scorer.score < 0.9 && turn.label != task.label"})
	got := set.Evaluate(context.Background(), task, Input{
		Turn: testTurn(), Label: "invoice-1", LatencyS: latency(12.5), State: testState(),
		ScorerScore: 0.8, ScorerChecks: map[string]float64{"task_created": 1},
	})
	if len(got) != 6 {
		t.Fatalf("Evaluate = %d results, want 6", len(got))
	}
	for _, r := range got {
		if !r.Passed || r.Err != nil {
			t.Errorf("check %s = %+v, want passed", r.Name, r)
		}
	}
}
