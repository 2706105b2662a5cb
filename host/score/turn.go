package score

import "math"

// The process score is computed where the trace is read:
// trace.ProcessScore (docs/scoring.md).

// Weighted is one score with its weight in a weighted mean.
type Weighted struct {
	Score  float64
	Weight float64
}

// KPIScore is a turn's KPI score: the weighted mean of the task scorer's
// score (weighted by its number of checks; a scorer with no checks weighs 1)
// and each CEL check's score (weighted by the check's weight; a check with a
// non-positive weight is left out). Without CEL checks it is the scorer's
// score.
func KPIScore(scorerScore float64, scorerChecks int, cel []Weighted) float64 {
	if len(cel) == 0 {
		return scorerScore
	}
	w := float64(max(scorerChecks, 1))
	sum, total := scorerScore*w, w
	for _, c := range cel {
		if c.Weight <= 0 {
			continue
		}
		sum += c.Score * c.Weight
		total += c.Weight
	}
	return sum / total
}

// TurnScore is process_weight·process + kpi_weight·kpi.
func TurnScore(processWeight, kpiWeight, process, kpi float64) float64 {
	return processWeight*process + kpiWeight*kpi
}

// round9 rounds to 9 decimals: below any precision a score carries, above
// the noise of binary floating point. Only comparisons round: every score
// and mean is kept and written at full precision (docs/verify.md).
func round9(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return math.Round(x*1e9) / 1e9
}

// ge and le compare rounded values, so gates are inclusive in decimal.
func ge(a, b float64) bool { return round9(a) >= round9(b) }
func le(a, b float64) bool { return round9(a) <= round9(b) }
func gt(a, b float64) bool { return round9(a) > round9(b) }
