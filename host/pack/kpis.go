package pack

import (
	"fmt"
	"slices"
	"strings"

	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/scorer"
)

// checkKPIs checks the task's KPI keys against the installed scorers'
// declarations: a key must be declared by the task's scorer (for a scorer
// that combines upstream results, such as composite: by some other scorer),
// and its value must have the declared type.
func (d *decoder) checkKPIs(t *Task, path string, scorerNode *node, kpisKey *mkey, kpis *node) {
	desc, ok := d.opts.Scorers[t.Scorer]
	if !ok {
		return // reported by checkScorer
	}
	combines := desc.NeedsPart(scorer.NeedUpstream)
	var sources []scorer.Description
	if combines {
		ids := make([]scorer.ID, 0, len(d.opts.Scorers))
		for id, o := range d.opts.Scorers {
			if !o.NeedsPart(scorer.NeedUpstream) {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			sources = append(sources, d.opts.Scorers[id])
		}
	} else {
		sources = []scorer.Description{desc}
	}
	declared := 0
	if kpis != nil {
		for i, k := range kpis.keys {
			var types []scorer.ValueType
			for _, s := range sources {
				for _, kp := range s.KPIs {
					if kp.Key == k.str {
						types = append(types, kp.ValueType)
					}
				}
			}
			if len(types) == 0 {
				d.errf(k.pos(), CodeUnknownKPI, "", "%s", unknownKPIMessage(path, k.str, desc.ID, combines, sources))
				continue
			}
			declared++
			d.checkKPIValue(kpis.items[i], path, k.str, types)
		}
	}
	if combines && declared == 0 {
		pos := scorerNode.pos()
		if kpisKey != nil {
			pos = kpisKey.pos()
		}
		d.errf(pos, CodeUnknownKPI, "composite", "%s: scorer %s combines the scorers that declare the task's KPI keys, and no installed scorer declares any of them",
			path, desc.ID)
	}
}

func unknownKPIMessage(path, key string, id scorer.ID, combines bool, sources []scorer.Description) string {
	var keys []string
	for _, s := range sources {
		for _, kp := range s.KPIs {
			if !slices.Contains(keys, kp.Key) {
				keys = append(keys, kp.Key)
			}
		}
	}
	slices.Sort(keys)
	var msg string
	if combines {
		msg = fmt.Sprintf("%s.kpis: %q is not a KPI key any installed scorer declares", path, clip(key))
	} else {
		msg = fmt.Sprintf("%s.kpis: %q is not a KPI key of scorer %s", path, clip(key), id)
	}
	if s := didYouMean(key, keys); s != "" {
		return msg + s
	}
	if len(keys) == 0 {
		return msg + " (it declares none)"
	}
	return msg + " (known: " + strings.Join(keys, ", ") + ")"
}

// checkKPIValue reports a value of KPI key of the task at path matching
// none of the declared types, at the value (or at the first list item or
// map entry that is wrong). Its path in the message, path.kpis.key, is only
// joined when there is a message.
func (d *decoder) checkKPIValue(v *node, path, key string, types []scorer.ValueType) {
	for _, vt := range types {
		if _, ok := kpiTypeError(v, "", vt); ok {
			return
		}
	}
	dg, _ := kpiTypeError(v, path+".kpis."+key, types[0])
	d.c.add(dg, "")
}

func kpiTypeError(v *node, path string, vt scorer.ValueType) (diag.Diagnostic, bool) {
	bad := func(n *node, p, want string) (diag.Diagnostic, bool) {
		return diag.Errorf(n.pos(), CodeType, "%s: want %s, got %s", p, want, n.describe()), false
	}
	switch vt {
	case scorer.Bool:
		if v.kind != kBool {
			return bad(v, path, "true or false")
		}
	case scorer.Number:
		if v.kind != kInt && v.kind != kFloat {
			return bad(v, path, "a number")
		}
	case scorer.Integer:
		if v.kind != kInt && !(v.kind == kFloat && v.num == float64(int64(v.num))) {
			return bad(v, path, "an integer")
		}
	case scorer.String:
		if v.kind != kString {
			return bad(v, path, "a string")
		}
	case scorer.StringList:
		return stringListError(v, path)
	case scorer.StringListMap:
		if v.kind != kMap {
			return bad(v, path, "a mapping of names to lists of strings")
		}
		for i, k := range v.keys {
			if dg, ok := stringListError(v.items[i], path+"."+k.str); !ok {
				return dg, false
			}
		}
	}
	return diag.Diagnostic{}, true
}

func stringListError(v *node, path string) (diag.Diagnostic, bool) {
	if v.kind != kSeq {
		return diag.Errorf(v.pos(), CodeType, "%s: want a list of strings, got %s", path, v.describe()), false
	}
	for i, it := range v.items {
		if it.kind != kString {
			return diag.Errorf(it.pos(), CodeType, "%s[%d]: want a string, got %s (quote it)", path, i, it.describe()), false
		}
	}
	return diag.Diagnostic{}, true
}
