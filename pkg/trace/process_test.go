package trace

import "testing"

// TestProcessScoreOfTurn checks the process score formula on derived turns
// (docs/scoring.md); TestProcessScoreReferenceVectors checks it on traces.
func TestProcessScoreOfTurn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		turn Turn
		want float64
	}{
		{Turn{}, 0.25},
		{Turn{Finalized: true, ToolEvents: 2, TextLen: 60}, 1},
		{Turn{Error: true}, 0.1},
		{Turn{Finalized: true, ToolEvents: 9, TextLen: 80}, 0.9},
	}
	for _, tt := range tests {
		if got := ProcessScore(&tt.turn); got != tt.want {
			t.Errorf("ProcessScore(%+v) = %v, want %v", tt.turn, got, tt.want)
		}
	}
	if got := ProcessScore(nil); got != 0.25 {
		t.Errorf("ProcessScore(nil) = %v, want 0.25", got)
	}
}
