package score

import (
	"math"
	"testing"
)

func TestKPIScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		score  float64
		checks int
		cel    []Weighted
		want   float64
	}{
		{"no CEL is the scorer's score", 0.8, 5, nil, 0.8},
		{"scorer weighs its checks", 0.5, 2, []Weighted{{Score: 1, Weight: 1}}, 0.666666667}, // (0.5·2 + 1)/3
		{"scorer without checks weighs 1", 1, 0, []Weighted{{Score: 0, Weight: 3}}, 0.25},    // (1 + 0)/4
		{"zero-weight CEL check is left out", 0.6, 3, []Weighted{{Score: 1, Weight: 0}}, 0.6},
		{"several CEL checks", 0.75, 4, []Weighted{{Score: 0.5, Weight: 2}, {Score: 1, Weight: 2}}, 0.75}, // (3+1+2)/8
		{"partial credit", 0.2, 1, []Weighted{{Score: 0.4, Weight: 1.5}}, 0.32},                           // (0.2 + 0.6)/2.5
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := KPIScore(tt.score, tt.checks, tt.cel); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("KPIScore(%v, %d, %v) = %v, want %v", tt.score, tt.checks, tt.cel, got, tt.want)
			}
		})
	}
}

func TestTurnScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pw, kw, process, kpi, want float64
	}{
		{0.35, 0.65, 1, 0.8, 0.87},      // 0.35 + 0.52
		{0.35, 0.65, 0.85, 0.5, 0.6225}, // 0.2975 + 0.325
		{0.35, 0.65, 0.25, 0, 0.0875},   // an empty trace, nothing verified
		{0.5, 0.5, 0.1, 0.2, 0.15},      // 0.05 + 0.1
		{0, 1, 0.4, 0.333333333, 0.333333333},
	}
	for _, tt := range tests {
		if got := TurnScore(tt.pw, tt.kw, tt.process, tt.kpi); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("TurnScore(%v, %v, %v, %v) = %v, want %v", tt.pw, tt.kw, tt.process, tt.kpi, got, tt.want)
		}
	}
}
