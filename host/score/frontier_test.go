package score

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFrontier(t *testing.T) {
	t.Parallel()
	base := func(id string, mut func(*Summary)) Summary {
		s := Summary{Candidate: id, Eligible: true, MeanScore: 0.8, FinalizeRate: 1, ErrorRate: 0.1,
			MeanLatencyS: f64(30), MeanCostUSD: f64(0.05), MeanToolCalls: 4}
		if mut != nil {
			mut(&s)
		}
		return s
	}
	tests := []struct {
		name  string
		cands []Summary
		want  []string
	}{
		{"no candidates", nil, []string{}},
		{"none eligible", []Summary{base("a", func(s *Summary) { s.Eligible = false })}, []string{}},
		{"one", []Summary{base("a", nil)}, []string{"a"}},
		{"equal candidates both stay, sorted by id", []Summary{base("b", nil), base("a", nil)}, []string{"a", "b"}},
		{"equal in decimal, not in binary", []Summary{
			base("a", func(s *Summary) { s.MeanScore = 0.1 + 0.2 }),
			base("b", func(s *Summary) { s.MeanScore = 0.3 }),
		}, []string{"a", "b"}},
		{"higher mean_score dominates", []Summary{base("a", nil), base("b", func(s *Summary) { s.MeanScore = 0.81 })}, []string{"b"}},
		{"higher finalize_rate dominates", []Summary{base("a", func(s *Summary) { s.FinalizeRate = 0.9 }), base("b", nil)}, []string{"b"}},
		{"lower error_rate dominates", []Summary{base("a", nil), base("b", func(s *Summary) { s.ErrorRate = 0 })}, []string{"b"}},
		{"lower latency dominates", []Summary{base("a", nil), base("b", func(s *Summary) { s.MeanLatencyS = f64(29.5) })}, []string{"b"}},
		{"lower cost dominates", []Summary{base("a", nil), base("b", func(s *Summary) { s.MeanCostUSD = f64(0.04) })}, []string{"b"}},
		{"fewer tool calls dominates", []Summary{base("a", nil), base("b", func(s *Summary) { s.MeanToolCalls = 3.5 })}, []string{"b"}},
		{"trade-off: score against cost", []Summary{
			base("a", func(s *Summary) { s.MeanScore = 0.9 }),
			base("b", func(s *Summary) { s.MeanCostUSD = f64(0.01) }),
		}, []string{"a", "b"}},
		{"trade-off: score against latency and tools", []Summary{
			base("a", func(s *Summary) { s.MeanScore = 0.9 }),
			base("b", func(s *Summary) { s.MeanLatencyS, s.MeanToolCalls = f64(10), 2 }),
			base("c", nil), // dominated by both
		}, []string{"a", "b"}},
		{"an ineligible candidate dominates nobody", []Summary{
			base("a", nil),
			base("b", func(s *Summary) { s.Eligible, s.MeanScore = false, 1 }),
		}, []string{"a"}},
		{"latency ignored when a candidate lacks it", []Summary{
			base("a", func(s *Summary) { s.MeanLatencyS = f64(1) }),
			base("b", func(s *Summary) { s.MeanLatencyS = nil }),
		}, []string{"a", "b"}},
		{"cost ignored when a candidate lacks it", []Summary{
			base("a", func(s *Summary) { s.MeanCostUSD = f64(0.001) }),
			base("b", func(s *Summary) { s.MeanCostUSD = nil }),
		}, []string{"a", "b"}},
		{"dominated by one of a tie", []Summary{
			base("a", func(s *Summary) { s.MeanScore = 0.9 }),
			base("b", func(s *Summary) { s.MeanScore = 0.9 }),
			base("c", nil),
		}, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, Frontier(tt.cands)); diff != "" {
				t.Errorf("Frontier(%s) mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}
