package pack

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const govHead = `company: {id: acme}
personas: [ops]
tasks:
  - {label: t1, persona: ops, prompt: a, scorer: answer_keywords}
scoring: {process_weight: 0.5, kpi_weight: 0.5}
`

// TestGovernanceBlocks: the governance and kill_criteria blocks are
// optional (defaults 0.20 and 5), and their problems are positioned.
func TestGovernanceBlocks(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		extra string
		gov   Governance
		kills int
		diags []string
	}{
		"absent":         {"", Governance{SuspectRate: 0.2, MinReviews: 5}, 0, nil},
		"set":            {"governance: {suspect_rate: 0.3, min_reviews: 10}\n", Governance{SuspectRate: 0.3, MinReviews: 10}, 0, nil},
		"criteria":       {"kill_criteria:\n  - {name: a, expr: 'true', message: m}\n  - {name: b, expr: 'false'}\n", Governance{SuspectRate: 0.2, MinReviews: 5}, 2, nil},
		"rate out":       {"governance: {suspect_rate: 1.5}\n", Governance{}, 0, []string{"6:28: pack.range"}},
		"min reviews 0":  {"governance: {min_reviews: 0}\n", Governance{}, 0, []string{"6:27: pack.range"}},
		"unknown key":    {"governance: {suspect: 1}\n", Governance{}, 0, []string{"6:14: pack.unknown_key"}},
		"duplicate name": {"kill_criteria:\n  - {name: a, expr: 'true'}\n  - {name: a, expr: 'true'}\n", Governance{}, 0, []string{"8:12: pack.duplicate"}},
		"missing expr":   {"kill_criteria:\n  - {name: a}\n", Governance{}, 0, []string{"7:3: pack.required"}},
		"not a list":     {"kill_criteria: {name: a}\n", Governance{}, 0, []string{"6:16: pack.type"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, ds := Parse("p.yaml", []byte(govHead+tc.extra), Options{})
			var got []string
			for _, d := range ds {
				got = append(got, fmt.Sprintf("%d:%d: %s", d.Pos.Line, d.Pos.Col, d.Code))
			}
			if diff := cmp.Diff(tc.diags, got); diff != "" {
				t.Fatalf("Parse(%q) diagnostics (-want +got):\n%s\n%v", tc.extra, diff, ds)
			}
			if p == nil {
				return
			}
			if p.Governance != tc.gov || len(p.KillCriteria) != tc.kills {
				t.Errorf("Parse(%q) = governance %+v, %d criteria; want %+v, %d", tc.extra, p.Governance, len(p.KillCriteria), tc.gov, tc.kills)
			}
		})
	}
}
