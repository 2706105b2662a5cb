package kpi

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/pkg/diag"
)

// packYAML is a valid pack whose one task has one CEL check; the check's
// expr (and optionally message_expr) lines are spliced in at line 11, so
// an expression value starts at line 11 col 15 (plain), col 16 (quoted), or
// line 12 col 11 (block scalars).
func packYAML(exprLines string) string {
	return `personas: [p]
tasks:
  - label: t
    persona: p
    prompt: do it
    scorer: answer_keywords
    kpis:
      min_answer_length: 10
    cel:
      - name: c
` + exprLines + `
scoring:
  process_weight: 0.5
  kpi_weight: 0.5
company: {id: acme, name: Acme}
`
}

// scalar writes key: value in the given YAML style at the indentation of
// the check's keys (8 spaces). For block styles, lines stay lines.
func scalar(key string, style pack.ScalarStyle, value string) string {
	head := "        " + key + ": "
	switch style {
	case pack.SingleQuoted:
		return head + "'" + strings.ReplaceAll(value, "'", "''") + "'"
	case pack.DoubleQuoted:
		return head + `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(value) + `"`
	case pack.Literal, pack.Folded:
		ind := "|"
		if style == pack.Folded {
			ind = ">"
		}
		lines := strings.Split(value, "\n")
		return head + ind + "\n          " + strings.Join(lines, "\n          ")
	}
	return head + value
}

var styles = []struct {
	name  string
	style pack.ScalarStyle
}{
	{"plain", pack.Plain}, {"single-quoted", pack.SingleQuoted}, {"double-quoted", pack.DoubleQuoted},
	{"literal", pack.Literal}, {"folded", pack.Folded},
}

// loadCEL parses a pack with the checker plugged in and returns its
// diagnostics rendered as "line:col: code: message".
func loadCEL(t *testing.T, c *Checker, src string) []string {
	t.Helper()
	_, ds := pack.Parse("p.yaml", []byte(src), pack.Options{Checks: []pack.Check{c}})
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%d:%d: %s", d.Pos.Line, d.Pos.Col, d.Code))
	}
	return out
}

// TestCompileErrorPositions checks, for every kind of compile error and
// every scalar style, the exact line:col of the diagnostic. Each expression
// is a prefix and a rest: on one line for flow scalars, on two lines for
// block scalars.
func TestCompileErrorPositions(t *testing.T) {
	t.Parallel()
	kinds := []struct {
		name         string
		prefix, rest string
		want         map[pack.ScalarStyle]string
	}{
		{"syntax", "turn.finalized &&", "turn.answer = 'x'", map[pack.ScalarStyle]string{
			pack.Plain: "11:45: kpi.compile", pack.SingleQuoted: "11:46: kpi.compile", pack.DoubleQuoted: "11:46: kpi.compile",
			pack.Literal: "13:23: kpi.compile", pack.Folded: "13:23: kpi.compile"}},
		{"unknown variable", "turn.finalized &&", "tunr.answer == 'x'", map[pack.ScalarStyle]string{
			pack.Plain: "11:33: kpi.compile", pack.SingleQuoted: "11:34: kpi.compile", pack.DoubleQuoted: "11:34: kpi.compile",
			pack.Literal: "13:11: kpi.compile", pack.Folded: "13:11: kpi.compile"}},
		{"unknown field", "turn.finalized &&", "turn.answr == 'x'", map[pack.ScalarStyle]string{
			pack.Plain: "11:38: kpi.compile", pack.SingleQuoted: "11:39: kpi.compile", pack.DoubleQuoted: "11:39: kpi.compile",
			pack.Literal: "13:16: kpi.compile", pack.Folded: "13:16: kpi.compile"}},
		{"unknown field after escaped quotes", "turn.finalized &&", `"x" == turn.answr`, map[pack.ScalarStyle]string{
			// Plain: `"` inside a plain scalar is literal. Single-quoted: no escape
			// for ". Double-quoted: each \" takes two columns.
			pack.Plain: "11:45: kpi.compile", pack.SingleQuoted: "11:46: kpi.compile", pack.DoubleQuoted: "11:48: kpi.compile",
			pack.Literal: "13:23: kpi.compile", pack.Folded: "13:23: kpi.compile"}},
		{"unknown field after doubled single quotes", "turn.finalized &&", "'x' == turn.answr", map[pack.ScalarStyle]string{
			pack.Plain: "11:45: kpi.compile", pack.SingleQuoted: "11:48: kpi.compile", pack.DoubleQuoted: "11:46: kpi.compile",
			pack.Literal: "13:23: kpi.compile", pack.Folded: "13:23: kpi.compile"}},
		{"wrong argument type", "turn.finalized &&", "count_tool(turn.tools, 1) > 0", map[pack.ScalarStyle]string{
			pack.Plain: "11:43: kpi.compile", pack.SingleQuoted: "11:44: kpi.compile", pack.DoubleQuoted: "11:44: kpi.compile",
			pack.Literal: "13:21: kpi.compile", pack.Folded: "13:21: kpi.compile"}},
		{"wrong result type", "size(turn.tools) +", "turn.loop_iters", map[pack.ScalarStyle]string{
			pack.Plain: "11:15: kpi.type", pack.SingleQuoted: "11:16: kpi.type", pack.DoubleQuoted: "11:16: kpi.type",
			pack.Literal: "12:11: kpi.type", pack.Folded: "12:11: kpi.type"}},
		{"nested comprehension over events", "turn.finalized &&", "turn.events.all(e, turn.events.exists(f, f.line > e.line))", map[pack.ScalarStyle]string{
			pack.Plain: "11:15: kpi.cost", pack.SingleQuoted: "11:16: kpi.cost", pack.DoubleQuoted: "11:16: kpi.cost",
			pack.Literal: "12:11: kpi.cost", pack.Folded: "12:11: kpi.cost"}},
	}
	for _, k := range kinds {
		for _, st := range styles {
			t.Run(k.name+"/"+st.name, func(t *testing.T) {
				t.Parallel()
				expr := k.prefix + " " + k.rest
				if st.style == pack.Literal || st.style == pack.Folded {
					expr = k.prefix + "\n" + k.rest
				}
				src := packYAML(scalar("expr", st.style, expr))
				got := loadCEL(t, NewChecker(), src)
				want := []string{k.want[st.style]}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Parse(%q) diagnostics mismatch (-want +got):\n%s", src, diff)
				}
			})
		}
	}
}

func TestCompileMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want string // "line:col: code: message" via TextPos
	}{
		{"turn.answr == 'x'", "expr:1:6: kpi.compile: undefined field 'answr' (did you mean 'answer'?)"},
		{"turn.finalized && tunr.error", "expr:1:19: kpi.compile: undeclared reference to 'tunr' (did you mean 'turn'?)"},
		{"turn.finalized &&\n  state.tasks.exists(t, t.prio > 1.0)", "expr:2:27: kpi.compile: undefined field 'prio'"},
		{"turn.tool_calls.exists(c, c.nam == 'x')", "expr:1:29: kpi.compile: undefined field 'nam' (did you mean 'name'?)"},
		{"turn.events.exists(e, e.kind == 'x')", "expr:1:25: kpi.compile: undefined field 'kind'"},
		{"before.memory.exists(m, m.text == 'x')", "expr:1:27: kpi.compile: undefined field 'text'"},
		{"scorer.scor > 0.5", "expr:1:8: kpi.compile: undefined field 'scor' (did you mean 'score'?)"},
		{"task.tag == 'x'", "expr:1:6: kpi.compile: undefined field 'tag' (did you mean 'tags'?)"},
		{"in_order(turn.tools, 'a')", "expr:1:9: kpi.compile: found no matching overload for 'in_order' applied to '(list(string), string)'"},
		{"turn.events.all(e, turn.events.exists(f, f.line > e.line))",
			"expr:1:1: kpi.cost: estimated cost 36012003 exceeds the limit 5000000; avoid nesting comprehensions over large lists (turn.events, state.tasks)"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			_, ds := NewChecker().Compile(tt.expr, TextPos("expr", tt.expr))
			if got := ds.Error(); got != tt.want {
				t.Errorf("Compile(%q) = %q, want %q", tt.expr, got, tt.want)
			}
		})
	}
}

func TestCompileMessageExpr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msg  string
		want []string
	}{
		{"string is fine", `"only " + string(size(turn.tools)) + " tools"`, nil},
		{"not a string", `size(turn.tools)`, []string{"12:24: kpi.type"}},
		{"unknown field", `"x" + turn.nam`, []string{"12:35: kpi.compile"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := packYAML(scalar("expr", pack.Plain, "turn.finalized") + "\n" + scalar("message_expr", pack.SingleQuoted, tt.msg))
			got := loadCEL(t, NewChecker(), src)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) diagnostics mismatch (-want +got):\n%s", src, diff)
			}
		})
	}
}

// TestCompileReportsEveryProblem checks that all the checks of a pack are
// compiled and every problem reported in one pass, sorted.
func TestCompileReportsEveryProblem(t *testing.T) {
	t.Parallel()
	src := packYAML(scalar("expr", pack.Plain, "turn.answr == 'x'") + `
      - name: d
        expr: size(turn.tools)
      - name: e
        expr: turn.finalized
      - name: f
        expr: nope`)
	got := loadCEL(t, NewChecker(), src)
	want := []string{"11:20: kpi.compile", "13:15: kpi.type", "17:15: kpi.compile"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse diagnostics mismatch (-want +got):\n%s", diff)
	}
}

func TestCompileCostLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr   string
		refuse bool
	}{
		{"turn.events.all(e, e.type != 'error')", false},
		{"state.tasks.exists(t, t.context_notes.exists(n, n.text.contains('handoff')))", false},
		{"state.memory.exists(m, m.body.lowerAscii().contains('acme'))", false},
		{"keywords_ratio(turn.answer, ['a', 'b', 'c'])", false},
		{"turn.events.all(e, turn.events.exists(f, f.line > e.line))", true},
		{"turn.events.exists(e, turn.tool_calls.exists(c, turn.phases.exists(p, p == c.name)))", true},
		{"state.tasks.all(t, state.memory.exists(m, m.body.contains(t.title)))", true},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			e, ds := NewChecker().Compile(tt.expr, TextPos("expr", tt.expr))
			refused := len(ds) == 1 && ds[0].Code == CodeCost
			if refused != tt.refuse {
				t.Errorf("Compile(%q) = %v, %v; want refused by cost = %v", tt.expr, e, ds, tt.refuse)
			}
			if !tt.refuse && (e == nil || e.Estimate.Max > DefaultLimits.Estimate) {
				t.Errorf("Compile(%q).Estimate = %v, want within %d", tt.expr, e, DefaultLimits.Estimate)
			}
		})
	}
}

func TestTextPos(t *testing.T) {
	t.Parallel()
	at := TextPos("expr", "ab\nçd\n")
	tests := []struct {
		off  int
		want diag.Pos
	}{
		{0, diag.Pos{File: "expr", Line: 1, Col: 1}},
		{2, diag.Pos{File: "expr", Line: 1, Col: 3}},
		{3, diag.Pos{File: "expr", Line: 2, Col: 1}},
		{4, diag.Pos{File: "expr", Line: 2, Col: 2}},
		{9, diag.Pos{File: "expr", Line: 3, Col: 1}},
	}
	for _, tt := range tests {
		if got := at(tt.off); got != tt.want {
			t.Errorf("TextPos(%d) = %v, want %v", tt.off, got, tt.want)
		}
	}
}

func TestEnvDeclaresTypes(t *testing.T) {
	t.Parallel()
	// Each variable has a declared type, so its fields are checked; dyn
	// appears only where values really are free-form (KPI values, tool args).
	tests := []struct{ expr, typ string }{
		{"turn", "kpi.Turn"},
		{"turn.tool_calls", "list(sdk.ToolCall)"},
		{"turn.tool_calls[0].args", "map(string, dyn)"},
		{"turn.events[0]", "sdk.Event"},
		{"turn.latency_s", "double"},
		{"task.kpis", "map(string, dyn)"},
		{"state.tasks[0].priority", "double"},
		{"before.tasks[0].context_notes", "list(sdk.Note)"},
		{"state.memory[0].tags", "list(string)"},
		{"scorer.checks", "map(string, double)"},
	}
	for _, tt := range tests {
		e, ds := NewChecker().Compile(tt.expr, TextPos("expr", tt.expr))
		if ds != nil {
			t.Fatalf("Compile(%q) = %v", tt.expr, ds)
		}
		if got := e.TypeName(); got != tt.typ {
			t.Errorf("Compile(%q).TypeName() = %q, want %q", tt.expr, got, tt.typ)
		}
	}
}

// TestExamplePacks compiles the CEL checks of the packs shipped in packs/ and
// the test fixtures.
func TestExamplePacks(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"../../packs/example.yaml", "../../packs/support-desk.yaml",
		"../../packs/release-engineering.yaml", "../../testdata/fixtures/pack.yaml"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			c := NewChecker()
			p, ds := pack.Load(path, pack.Options{Checks: []pack.Check{c}})
			if p == nil || ds.HasErrors() {
				t.Fatalf("Load(%q) = %v", path, ds)
			}
			n := 0
			for _, task := range p.Tasks {
				n += len(task.CEL)
				if got := c.Set().Len(task.Label); got != len(task.CEL) {
					t.Errorf("Load(%q): task %s has %d compiled checks, want %d", path, task.Label, got, len(task.CEL))
				}
			}
			t.Logf("%s: %d CEL checks", path, n)
		})
	}
}

// TestCompileConcurrent compiles, from many goroutines at once, expressions
// that open comprehension scopes and ones with undeclared references (which
// raced inside cel-go before Env warmed its catalog up); meaningful under -race.
func TestCompileConcurrent(t *testing.T) {
	t.Parallel()
	srcs := []string{"turn.events.exists(e, e.type == 'x')", "nope.answer", "turn.tools.all(t, nope2 == t)", "turn.answr"}
	done := make(chan bool)
	for i := 0; i < 16; i++ {
		go func() {
			src := srcs[i%len(srcs)]
			e, _ := NewChecker().Compile(src, TextPos("expr", src))
			done <- e != nil
		}()
	}
	ok := 0
	for i := 0; i < 16; i++ {
		if <-done {
			ok++
		}
	}
	if ok != 4 {
		t.Errorf("concurrent Compile: %d compiled, want 4", ok)
	}
}

func TestWithLimits(t *testing.T) {
	t.Parallel()
	got := NewChecker(WithLimits(Limits{Eval: 7})).Limits()
	want := Limits{Estimate: DefaultLimits.Estimate, Eval: 7, Turn: DefaultLimits.Turn}
	if got != want {
		t.Errorf("NewChecker(WithLimits(Eval: 7)).Limits() = %+v, want %+v", got, want)
	}
}

// TestSetFindsEachTasksChecks: the compiled checks are kept by the task's
// position in the pack. A loaded pack's tasks carry it (Index); a task
// made by hand (Index 0 for all), a copy of a pack's task and a task of
// the same label still find theirs; a label the pack does not have finds
// none. It fails if a task is given another task's checks.
func TestSetFindsEachTasksChecks(t *testing.T) {
	t.Parallel()
	mk := func(i int) *pack.Task {
		return &pack.Task{Label: fmt.Sprintf("t%d", i), CEL: []*pack.CELCheck{
			{Name: fmt.Sprintf("c%d", i), Expr: fmt.Sprintf("turn.label == 't%d'", i), Weight: 1},
		}}
	}
	var b strings.Builder
	b.WriteString("schema_version: hsm.company_eval_pack.v1\ncompany: {id: c, name: C, api_base: 'http://127.0.0.1:1'}\npersonas: [p]\ntool_catalog: [search]\ntasks:\n")
	for i := range 5 {
		fmt.Fprintf(&b, "  - label: t%d\n    persona: p\n    prompt: x\n    scorer: answer_keywords\n    kpis: {answer_keywords: [x]}\n", i)
		if i != 3 { // t3 has no check
			fmt.Fprintf(&b, "    cel:\n      - name: c%d\n        expr: turn.label == 't%d'\n", i, i)
		}
	}
	b.WriteString("scoring: {process_weight: 0.5, kpi_weight: 0.5, min_mean_score: 0.5, min_finalize_rate: 1, max_error_rate: 0, pareto_filter: true}\n")
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	loaded := NewChecker()
	p, ds := pack.Load(path, pack.Options{Checks: []pack.Check{loaded}})
	if p == nil || ds.HasErrors() {
		t.Fatalf("Load = %v", ds)
	}
	byHand := &pack.Pack{}
	for i := range 5 {
		if i != 3 {
			byHand.Tasks = append(byHand.Tasks, mk(i))
		} else {
			byHand.Tasks = append(byHand.Tasks, &pack.Task{Label: "t3"})
		}
	}
	handChecker := NewChecker()
	if ds := handChecker.CheckPack(byHand); len(ds) != 0 {
		t.Fatalf("CheckPack(by hand) = %v", ds)
	}
	want := func(tk *pack.Task) []string {
		if tk.Label == "t3" || tk.Label == "t9" {
			return nil
		}
		return []string{"c" + tk.Label[1:]}
	}
	names := func(s *Set, tk *pack.Task) []string {
		var out []string
		for _, r := range s.Evaluate(context.Background(), tk, Input{Turn: testTurn()}) {
			out = append(out, r.Name)
		}
		return out
	}
	for _, c := range []struct {
		name string
		p    *pack.Pack
		set  *Set
	}{{"loaded", p, loaded.Set()}, {"by hand", byHand, handChecker.Set()}} {
		for i, tk := range c.p.Tasks {
			if c.name == "loaded" && tk.Index() != i {
				t.Errorf("loaded task %s: Index() = %d, want %d", tk.Label, tk.Index(), i)
			}
			cp := *tk
			other := &pack.Task{Label: tk.Label}
			for _, q := range []*pack.Task{tk, &cp, other} {
				if got := names(c.set, q); !slices.Equal(got, want(tk)) {
					t.Errorf("%s: Evaluate(%s) ran %v, want %v", c.name, tk.Label, got, want(tk))
				}
			}
			if got := c.set.Len(tk.Label); got != len(want(tk)) {
				t.Errorf("%s: Len(%s) = %d, want %d", c.name, tk.Label, got, len(want(tk)))
			}
		}
		if got := names(c.set, &pack.Task{Label: "t9"}); got != nil || c.set.Len("t9") != 0 {
			t.Errorf("%s: a label not in the pack ran %v, want none", c.name, got)
		}
	}
}
