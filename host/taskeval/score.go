package taskeval

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Category names one of the three scored categories.
type Category string

// The three categories, in canonical order.
const (
	AgentPerformance   Category = "agentPerformance"
	TaskOutcomeQuality Category = "taskOutcomeQuality"
	ProcessCompliance  Category = "processCompliance"
)

// Categories returns the three categories in canonical order.
func Categories() []Category {
	return []Category{AgentPerformance, TaskOutcomeQuality, ProcessCompliance}
}

// Weight is the category's share of the overall score (0 for an unknown name).
func (c Category) Weight() float64 {
	switch c {
	case AgentPerformance:
		return 0.30
	case TaskOutcomeQuality:
		return 0.45
	case ProcessCompliance:
		return 0.25
	}
	return 0
}

// Valid reports whether c is one of the three categories.
func (c Category) Valid() bool { return c.Weight() != 0 }

// Band is the named range a score falls in.
type Band string

// The five bands.
const (
	Failing    Band = "failing"    // 0..39
	Weak       Band = "weak"       // 40..59
	Acceptable Band = "acceptable" // 60..74
	Strong     Band = "strong"     // 75..89
	Excellent  Band = "excellent"  // 90..100
)

// Bands returns every band from lowest to highest.
func Bands() []Band { return []Band{Failing, Weak, Acceptable, Strong, Excellent} }

// ErrInvalidScore is wrapped by every ScoreError.
var ErrInvalidScore = errors.New("score must be an integer between 0 and 100")

// ScoreError says which field held a score outside the integers 0..100.
type ScoreError struct {
	Field string  // e.g. "deterministicScore", "aiScore", "agentPerformance.finalScore"
	Value float64 // the rejected value
}

func (e *ScoreError) Error() string {
	return fmt.Sprintf("%s must be an integer between 0 and 100, got %s",
		e.Field, strconv.FormatFloat(e.Value, 'g', -1, 64))
}

func (e *ScoreError) Unwrap() error { return ErrInvalidScore }

// CheckScore returns v as an int when it is an integer in 0..100, else a
// *ScoreError naming field. Integer-valued floats such as 50.0 are accepted.
func CheckScore(field string, v float64) (int, error) {
	if math.IsNaN(v) || v < 0 || v > 100 || v != math.Trunc(v) {
		return 0, &ScoreError{Field: field, Value: v}
	}
	return int(v), nil
}

func checkInt(field string, v int) error {
	if v < 0 || v > 100 {
		return &ScoreError{Field: field, Value: float64(v)}
	}
	return nil
}

// ScoreBand returns the band of an integer score 0..100.
func ScoreBand(score int) (Band, error) {
	if err := checkInt("score", score); err != nil {
		return "", err
	}
	switch {
	case score >= 90:
		return Excellent, nil
	case score >= 75:
		return Strong, nil
	case score >= 60:
		return Acceptable, nil
	case score >= 40:
		return Weak, nil
	}
	return Failing, nil
}

// FinalScore blends a deterministic and an AI score:
// round(clamp(det*0.7 + ai*0.3, 0, 100)), rounding half up, in IEEE double
// arithmetic (det=45, ai=0 gives 31.499999999999996, so 31).
func FinalScore(det, ai int) (int, error) {
	if err := checkInt("deterministicScore", det); err != nil {
		return 0, err
	}
	if err := checkInt("aiScore", ai); err != nil {
		return 0, err
	}
	d, a := float64(det), float64(ai)
	return roundScore(float64(d*0.7) + float64(a*0.3)), nil
}

// FinalScores are the final scores of the three categories.
type FinalScores map[Category]int

// OverallScore is round(clamp(sum(final*weight))) over exactly the three
// categories, summed in canonical order.
func OverallScore(finals FinalScores) (int, error) {
	for c := range finals {
		if !c.Valid() {
			return 0, fmt.Errorf("overall score: unknown category %q", c)
		}
	}
	sum := 0.0
	for _, c := range Categories() {
		f, ok := finals[c]
		if !ok {
			return 0, fmt.Errorf("overall score: missing category %s", c)
		}
		if err := checkInt(string(c)+".finalScore", f); err != nil {
			return 0, err
		}
		sum += float64(float64(f) * c.Weight())
	}
	return roundScore(sum), nil
}

// roundScore clamps x to 0..100 and rounds half up (like JavaScript's
// Math.round for non-negative values). x - floor(x) is exact here, so a
// product just below .5 rounds down.
func roundScore(x float64) int {
	x = math.Max(0, math.Min(100, x))
	f := math.Floor(x)
	if x-f >= 0.5 {
		f++
	}
	return int(f)
}
