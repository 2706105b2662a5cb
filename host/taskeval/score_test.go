package taskeval

import (
	"errors"
	"strings"
	"testing"
)

func TestScoreBand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		score int
		want  Band
	}{
		// Reference vector.
		{39, Failing}, {40, Weak}, {59, Weak}, {60, Acceptable}, {74, Acceptable},
		{75, Strong}, {89, Strong}, {90, Excellent}, {100, Excellent},
		// Every other boundary.
		{0, Failing}, {1, Failing}, {41, Weak}, {61, Acceptable}, {76, Strong}, {91, Excellent}, {99, Excellent},
	}
	for _, tt := range tests {
		got, err := ScoreBand(tt.score)
		if err != nil || got != tt.want {
			t.Errorf("ScoreBand(%d) = %q, %v, want %q", tt.score, got, err, tt.want)
		}
	}
	for _, bad := range []int{-1, 101, 1000} {
		_, err := ScoreBand(bad)
		if err == nil || !strings.Contains(err.Error(), "integer between 0 and 100") || !errors.Is(err, ErrInvalidScore) {
			t.Errorf("ScoreBand(%d) error = %v, want one containing %q", bad, err, "integer between 0 and 100")
		}
	}
}

func TestFinalScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		det, ai int
		want    int
	}{
		{"reference 0,100", 0, 100, 30},
		{"reference 100,0", 100, 0, 70},
		{"reference 73,89", 73, 89, 78},
		{"bounds 0,0", 0, 0, 0},
		{"bounds 100,100", 100, 100, 100},
		// Exact .5 ties round half up.
		{"tie 0,5 is 1.5", 0, 5, 2},
		{"tie 0,15 is 4.5", 0, 15, 5},
		{"tie 5,0 is 3.5", 5, 0, 4},
		{"tie 15,0 is 10.5", 15, 0, 11},
		// Decimal .5, but the double product falls just below it.
		{"contract 45,0 is 31.499999999999996", 45, 0, 31},
		{"1,36 is 11.499999999999998", 1, 36, 11},
		{"2,57 is 18.499999999999996", 2, 57, 18},
		{"3,18 is 7.499999999999999", 3, 18, 7},
		{"6,1 is 4.499999999999999", 6, 1, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FinalScore(tt.det, tt.ai)
			if err != nil || got != tt.want {
				t.Errorf("FinalScore(%d, %d) = %d, %v, want %d", tt.det, tt.ai, got, err, tt.want)
			}
		})
	}
}

func TestFinalScoreRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		det, ai int
		field   string
	}{
		{-1, 50, "deterministicScore"},
		{101, 50, "deterministicScore"},
		{50, 101, "aiScore"},
		{50, -1, "aiScore"},
	}
	for _, tt := range tests {
		_, err := FinalScore(tt.det, tt.ai)
		var se *ScoreError
		if !errors.As(err, &se) || se.Field != tt.field || !strings.Contains(err.Error(), "integer between 0 and 100") {
			t.Errorf("FinalScore(%d, %d) error = %v, want a ScoreError naming %s", tt.det, tt.ai, err, tt.field)
		}
	}
}

func TestCheckScore(t *testing.T) {
	t.Parallel()
	for _, ok := range []float64{0, 1, 50, 50.0, 100} {
		if got, err := CheckScore("aiScore", ok); err != nil || float64(got) != ok {
			t.Errorf("CheckScore(%v) = %d, %v, want %v", ok, got, err, ok)
		}
	}
	for _, bad := range []float64{-1, 100.5, 101, 49.5, -0.5} {
		if _, err := CheckScore("aiScore", bad); err == nil || !strings.HasPrefix(err.Error(), "aiScore must be an integer between 0 and 100") {
			t.Errorf("CheckScore(%v) error = %v, want aiScore ... integer between 0 and 100", bad, err)
		}
	}
}

func TestOverallScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		finals FinalScores
		want   int
	}{
		{"reference 80/90/70", FinalScores{AgentPerformance: 80, TaskOutcomeQuality: 90, ProcessCompliance: 70}, 82},
		{"all zero", FinalScores{AgentPerformance: 0, TaskOutcomeQuality: 0, ProcessCompliance: 0}, 0},
		{"all hundred", FinalScores{AgentPerformance: 100, TaskOutcomeQuality: 100, ProcessCompliance: 100}, 100},
		{"tie 12.5 rounds up", FinalScores{AgentPerformance: 0, TaskOutcomeQuality: 0, ProcessCompliance: 50}, 13},
		{"tie 4.5 rounds up", FinalScores{AgentPerformance: 0, TaskOutcomeQuality: 10, ProcessCompliance: 0}, 5},
		{"30.499999999999996 rounds down", FinalScores{AgentPerformance: 57, TaskOutcomeQuality: 2, ProcessCompliance: 50}, 30},
		{"19.499999999999996 rounds down", FinalScores{AgentPerformance: 62, TaskOutcomeQuality: 2, ProcessCompliance: 0}, 19},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := OverallScore(tt.finals)
			if err != nil || got != tt.want {
				t.Errorf("OverallScore(%v) = %d, %v, want %d", tt.finals, got, err, tt.want)
			}
		})
	}
}

func TestOverallScoreRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		finals FinalScores
		want   string
	}{
		{"missing", FinalScores{AgentPerformance: 1, TaskOutcomeQuality: 2}, "missing category processCompliance"},
		{"unknown", FinalScores{AgentPerformance: 1, TaskOutcomeQuality: 2, ProcessCompliance: 3, "speed": 4}, `unknown category "speed"`},
		{"unknown replacing one", FinalScores{AgentPerformance: 1, TaskOutcomeQuality: 2, "speed": 4}, `unknown category "speed"`},
		{"empty", FinalScores{}, "missing category agentPerformance"},
		{"out of range", FinalScores{AgentPerformance: 1, TaskOutcomeQuality: 101, ProcessCompliance: 3},
			"taskOutcomeQuality.finalScore must be an integer between 0 and 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OverallScore(tt.finals)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("OverallScore(%v) error = %v, want one containing %q", tt.finals, err, tt.want)
			}
		})
	}
}
