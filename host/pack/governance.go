package pack

import (
	"fmt"

	"github.com/assay-eval/assay/pkg/diag"
)

// Governance is the pack's governance block (docs/governance.md): when a
// scorer's review override rate makes it suspect.
type Governance struct {
	SuspectRate float64 // default 0.20
	MinReviews  int     // default 5
}

// Governance defaults.
const (
	DefaultSuspectRate = 0.20
	DefaultMinReviews  = 5
)

// KillCriterion is one pre-registered kill criterion: a CEL expression over
// history and scorers that fires when true (docs/governance.md).
type KillCriterion struct {
	Pos     diag.Pos // the criterion's "- " item
	Name    string
	Expr    string
	ExprPos ScalarPos
	Message string
}

var (
	governanceKeys = []string{"suspect_rate", "min_reviews"}
	killKeys       = []string{"name", "expr", "message"}
)

// governanceBlocks decodes the optional governance and kill_criteria
// blocks; without them the defaults hold and there are no criteria.
func (d *decoder) governanceBlocks(root *node, p *Pack) {
	p.Governance = Governance{SuspectRate: DefaultSuspectRate, MinReviews: DefaultMinReviews}
	if k, v := root.get("governance"); v != nil && d.object(k, v, "governance", governanceKeys, nil) {
		if _, rv := v.get("suspect_rate"); rv != nil {
			if r, ok := d.number(rv, "governance.suspect_rate"); ok {
				if r <= 0 || r > 1 {
					d.errf(rv.pos(), CodeRange, "", "governance.suspect_rate: want a rate in (0, 1], got %s", rv.str)
				}
				p.Governance.SuspectRate = r
			}
		}
		if _, nv := v.get("min_reviews"); nv != nil {
			if n, ok := d.integer(nv, "governance.min_reviews"); ok {
				if n < 1 {
					d.errf(nv.pos(), CodeRange, "", "governance.min_reviews: want a count >= 1, got %d", n)
				}
				p.Governance.MinReviews = n
			}
		}
	}
	_, v := root.get("kill_criteria")
	if v == nil {
		return
	}
	if v.kind != kSeq {
		d.errf(v.pos(), CodeType, "", "kill_criteria: want a list of criteria, got %s", v.describe())
		return
	}
	names := map[string]diag.Pos{}
	for i, item := range v.items {
		if kc := d.killCriterion(item, fmt.Sprintf("kill_criteria[%d]", i), names); kc != nil {
			p.KillCriteria = append(p.KillCriteria, kc)
		}
	}
}

func (d *decoder) killCriterion(v *node, path string, names map[string]diag.Pos) *KillCriterion {
	if !d.object(nil, v, path, killKeys, []string{"name", "expr"}) {
		return nil
	}
	kc := &KillCriterion{Pos: d.itemPos(v)}
	if _, nv := v.get("name"); nv != nil {
		if s, ok := d.str(nv, path+".name"); ok {
			kc.Name = s
			if prev, dup := names[s]; dup {
				d.errf(nv.pos(), CodeDuplicate, "", "%s.name: a kill criterion named %q is already at line %d", path, clip(s), prev.Line)
			} else {
				names[s] = nv.pos()
			}
		}
	}
	kc.Message = d.optStr(v, "message", path)
	_, ev := v.get("expr")
	if ev == nil {
		return nil
	}
	s, ok := d.str(ev, path+".expr")
	if !ok {
		return nil
	}
	kc.Expr, kc.ExprPos = s, d.scalarPos(ev)
	return kc
}
