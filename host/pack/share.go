package pack

import (
	"math"
	"slices"
)

// CELDef is what defines a CEL check, without where it is written: checks
// with equal CELDefs say the same.
type CELDef struct {
	name, expr, message, messageExpr, failureTag string
	weight                                       uint64 // bits: 0 and -0 are apart
}

// Def is c's CELDef.
func (c *CELCheck) Def() CELDef {
	return CELDef{name: c.Name, expr: c.Expr, message: c.Message, messageExpr: c.MessageExpr,
		failureTag: c.FailureTag, weight: math.Float64bits(c.Weight)}
}

// DropPositions drops what only the load's checks and diagnostics read:
// where each task, its CEL checks and its KPIs are written. The CEL checks that
// are then alike (the same name, expr, message, message_expr, weight and
// failure_tag) become one CELCheck shared by every task that has it, and a
// task whose checks are the previous task's shares its list. A pack of
// 10,000 tasks with the same check otherwise holds 10,000 copies of it,
// which differ only in where they are written (3 MB; docs/performance.md,
// "Verifying many small turns", eighth round).
//
// It is for a pack that is loaded, checked and its diagnostics rendered:
// afterwards a task's Pos and a check's Pos, ExprPos and MessagePos are
// zero, KPIPos finds nothing, and the checks and their lists are read only, as the KPI maps
// are. What each task's checks say is unchanged.
func (p *Pack) DropPositions() {
	shared := map[CELDef]*CELCheck{}
	var prev, list []*CELCheck
	for _, t := range p.Tasks {
		t.pos = nil
		if len(t.CEL) == 0 {
			continue
		}
		list = slices.Grow(list[:0], len(t.CEL))[:len(t.CEL)]
		for i, c := range t.CEL {
			d := c.Def()
			s, ok := shared[d]
			if !ok {
				s = &CELCheck{Name: c.Name, Expr: c.Expr, Message: c.Message, MessageExpr: c.MessageExpr,
					Weight: c.Weight, FailureTag: c.FailureTag}
				shared[d] = s
			}
			list[i] = s
		}
		if !slices.Equal(list, prev) {
			prev = slices.Clip(slices.Clone(list))
		}
		t.CEL = prev
	}
}
