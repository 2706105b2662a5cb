package verdict

import "math"

// Metric names the contract weights by default.
const (
	Correctness         = "correctness"
	RequirementCoverage = "requirementCoverage"
	TestResults         = "testResults"
	Architecture        = "architecture"
	Security            = "security"
	Performance         = "performance"
	Maintainability     = "maintainability"
	ArtifactValidity    = "artifactValidity"
)

// Metrics accepted but never weighted.
const (
	Confidence = "confidence"
	Cost       = "cost"
	Latency    = "latency"
)

// DefaultWeights returns the contract's default weighting (a fresh map).
func DefaultWeights() map[string]float64 {
	return map[string]float64{
		Correctness:         0.30,
		RequirementCoverage: 0.15,
		TestResults:         0.20,
		Architecture:        0.10,
		Security:            0.10,
		Performance:         0.05,
		Maintainability:     0.05,
		ArtifactValidity:    0.05,
	}
}

// Unweighted reports whether metric is one the engine accepts but never
// weights (confidence, cost, latency), whatever the caller's weightings say.
func Unweighted(metric string) bool {
	return metric == Confidence || metric == Cost || metric == Latency
}

// Weights merges the caller's weightings over the defaults, per key. A
// weighting that is negative or not finite is ignored (the default, if any,
// stays); unweighted metrics never get a weight.
func Weights(overrides map[string]float64) map[string]float64 {
	w := DefaultWeights()
	for k, v := range overrides {
		if Unweighted(k) || !finite(v) || v < 0 {
			continue
		}
		w[k] = v
	}
	return w
}

// WeightedScore is sum(v*w)/sum(w) over the metrics that are present and
// finite and have a positive weight; 0 when there are none. Floating-point
// noise below 1e-12 is rounded away so that, for example, a lone correctness
// of 0.85 scores exactly 0.85.
func WeightedScore(metrics, weights map[string]float64) float64 {
	var sum, wsum float64
	for k, w := range weights {
		v, ok := metrics[k]
		if !ok || !finite(v) || !(w > 0) || Unweighted(k) {
			continue
		}
		sum += v * w
		wsum += w
	}
	if wsum == 0 {
		return 0
	}
	return round12(sum / wsum)
}

// Tests are the test counts of an evaluation. Total, when given, overrides
// passed+failed as the denominator; Skipped is reported but not counted.
type Tests struct {
	Passed  int  `json:"passed"`
	Failed  int  `json:"failed"`
	Skipped int  `json:"skipped,omitempty"`
	Total   *int `json:"total,omitempty"`
}

// TestSummary is what TestMetrics derives from test counts.
type TestSummary struct {
	// Total is Tests.Total when given, else passed+failed.
	Total int `json:"total"`
	// TestResults is clamp01(passed/total - 0.25*failed); 0 when total is 0.
	TestResults float64 `json:"testResults"`
	// Confidence is how much evidence the test counts carry on their own:
	// total/(total+10), so 10 tests give 0.5 and 100 tests give 0.91.
	Confidence float64 `json:"confidence"`
}

// TestMetrics derives the testResults metric and the tests' own confidence.
func TestMetrics(t Tests) TestSummary {
	total := t.Passed + t.Failed
	if t.Total != nil {
		total = *t.Total
	}
	if total <= 0 {
		return TestSummary{Total: max(total, 0)}
	}
	r := float64(t.Passed)/float64(total) - 0.25*float64(t.Failed)
	return TestSummary{
		Total:       total,
		TestResults: round12(clamp01(r)),
		Confidence:  round12(float64(total) / float64(total+10)),
	}
}

// measuredCount counts the eight default metrics present and finite in m.
func measuredCount(m map[string]float64) int {
	n := 0
	for k := range DefaultWeights() {
		if v, ok := m[k]; ok && finite(v) {
			n++
		}
	}
	return n
}

// ConfidenceOf is the contract's confidence: a finite caller-supplied
// confidence metric as is, otherwise
// min(0.97, 0.35 + 0.08*measured + (tests ? min(0.2, passed/100) : 0)).
func ConfidenceOf(metrics map[string]float64, tests *Tests) float64 {
	if c, ok := metrics[Confidence]; ok && finite(c) {
		return c
	}
	c := 0.35 + 0.08*float64(measuredCount(metrics))
	if tests != nil {
		c += math.Min(0.2, float64(tests.Passed)/100)
	}
	return round12(math.Min(0.97, c))
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }

func round12(v float64) float64 { return math.Round(v*1e12) / 1e12 }
