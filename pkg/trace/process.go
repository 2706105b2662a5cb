package trace

import "math"

// ProcessScore is the harness's own score of a turn's process, reproduced
// exactly (docs/scoring.md):
//
//	0.5·finalized + 0.15·(no error) + 0.1·(tool_events <= 8) +
//	0.1·(tool_events > 0) + 0.15·(text_len >= 50)
//
// rounded to 3 decimals. A nil turn scores as an empty trace.
func ProcessScore(t *Turn) float64 {
	if t == nil {
		t = &Turn{}
	}
	s := 0.0
	if t.Finalized {
		s += 0.5
	}
	if !t.Error {
		s += 0.15
	}
	if t.ToolEvents <= 8 {
		s += 0.1
	}
	if t.ToolEvents > 0 {
		s += 0.1
	}
	if t.TextLen >= 50 {
		s += 0.15
	}
	return math.Round(s*1000) / 1000
}
