package pack

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assay-eval/assay/pkg/diag"
)

// TestDropPositions: after DropPositions no KPI has a position, and every
// task's checks say what they said (each field, the weight bit for bit),
// without positions; checks defined alike are one CELCheck, checks that differ in any one field are
// not, and a task with the previous task's checks shares its list.
func TestDropPositions(t *testing.T) {
	t.Parallel()
	base := CELCheck{Name: "finalized", Expr: "turn.finalized", Message: "not finalized", Weight: 1}
	variants := map[string]func(c *CELCheck){
		"same":         func(c *CELCheck) {},
		"name":         func(c *CELCheck) { c.Name = "other" },
		"expr":         func(c *CELCheck) { c.Expr = "!turn.error" },
		"message":      func(c *CELCheck) { c.Message = "other" },
		"message_expr": func(c *CELCheck) { c.MessageExpr = "'m'" },
		"failure_tag":  func(c *CELCheck) { c.FailureTag = "tag" },
		"weight":       func(c *CELCheck) { c.Weight = 2 },
		"weight -0":    func(c *CELCheck) { c.Weight = math.Copysign(0, -1) },
		"weight 0":     func(c *CELCheck) { c.Weight = 0 },
	}
	at := func(line int) diag.Pos { return diag.Pos{File: "p.yaml", Line: line, Col: 7} }
	var tasks []*Task
	var want [][]CELCheck
	line := 1
	for _, name := range []string{"same", "same", "name", "expr", "same", "message", "message_expr",
		"failure_tag", "weight", "weight -0", "weight 0", "same"} {
		c := base
		variants[name](&c)
		c.Pos, c.ExprPos, c.MessagePos = at(line), ScalarPos{Pos: at(line + 1), Lines: []diag.Pos{at(line + 1)}}, ScalarPos{Pos: at(line + 2)}
		second := base
		second.Name, second.Pos = "second", at(line+3)
		line += 4
		tasks = append(tasks, &Task{Label: name, CEL: []*CELCheck{&c, &second},
			pos: &taskPos{file: "p.yaml", line: int32(line), col: 3,
				kpis: []kpiPos{{key: "k", keyLine: int32(line), keyCol: 3, valueLine: int32(line), valueCol: 9}}}})
		want = append(want, []CELCheck{c, second})
	}
	tasks = append(tasks, &Task{Label: "none"})
	want = append(want, nil)
	p := &Pack{Tasks: tasks}
	p.DropPositions()

	noPos := cmpopts.IgnoreFields(CELCheck{}, "Pos", "ExprPos", "MessagePos")
	bits := cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })
	byDef := map[CELDef]*CELCheck{}
	for i, tk := range p.Tasks {
		var got []CELCheck
		for _, c := range tk.CEL {
			got = append(got, *c)
			if c.Pos != (diag.Pos{}) || !cmp.Equal(c.ExprPos, ScalarPos{}) || !cmp.Equal(c.MessagePos, ScalarPos{}) {
				t.Errorf("task %s: check %s keeps a position, want none", tk.Label, c.Name)
			}
			if prev, ok := byDef[c.Def()]; ok && prev != c {
				t.Errorf("task %s: check %s is a copy of one defined alike, want it shared", tk.Label, c.Name)
			}
			byDef[c.Def()] = c
		}
		if k, v, ok := tk.KPIPos("k"); ok {
			t.Errorf("task %s: KPIPos(k) = %v, %v, true after DropPositions, want nothing", tk.Label, k, v)
		}
		if pos := tk.Pos(); pos != (diag.Pos{}) {
			t.Errorf("task %s: Pos() = %v after DropPositions, want none", tk.Label, pos)
		}
		if diff := cmp.Diff(want[i], got, noPos, bits); diff != "" {
			t.Errorf("task %s: checks after DropPositions (-before +after):\n%s", tk.Label, diff)
		}
	}
	if len(byDef) != len(variants)+1 { // each variant (the base among them) and the second check
		t.Errorf("DropPositions left %d distinct checks, want %d", len(byDef), len(variants)+1)
	}
	if &p.Tasks[0].CEL[0] != &p.Tasks[1].CEL[0] {
		t.Errorf("tasks 0 and 1 have the same checks in two lists, want one")
	}
	for _, tk := range p.Tasks {
		if cap(tk.CEL) != len(tk.CEL) {
			t.Errorf("task %s: its list of checks has room to append in place, want none", tk.Label)
		}
	}
}
