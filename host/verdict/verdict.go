package verdict

import (
	"fmt"
	"math"
	"strings"
)

// Verdict is the outcome of an evaluation.
type Verdict string

// The verdicts, best first. UNKNOWN means there was no evidence to judge.
const (
	Pass             Verdict = "PASS"
	PassWithWarnings Verdict = "PASS_WITH_WARNINGS"
	Fail             Verdict = "FAIL"
	Blocked          Verdict = "BLOCKED"
	Unknown          Verdict = "UNKNOWN"
)

// Verdicts lists every verdict, best first.
var Verdicts = []Verdict{Pass, PassWithWarnings, Fail, Blocked, Unknown}

// ParseVerdict reads a verdict name, case-insensitively, with '-' or ' '
// accepted for '_'.
func ParseVerdict(s string) (Verdict, error) {
	n := strings.ToUpper(strings.NewReplacer("-", "_", " ", "_").Replace(strings.TrimSpace(s)))
	for _, v := range Verdicts {
		if string(v) == n {
			return v, nil
		}
	}
	return "", fmt.Errorf("unknown verdict %q: want one of PASS, PASS_WITH_WARNINGS, FAIL, BLOCKED, UNKNOWN", s)
}

// rank orders verdicts PASS > PASS_WITH_WARNINGS > FAIL > BLOCKED; UNKNOWN
// ranks below every other verdict (no evidence never passes a gate).
func (v Verdict) rank() int {
	switch v {
	case Pass:
		return 4
	case PassWithWarnings:
		return 3
	case Fail:
		return 2
	case Blocked:
		return 1
	default:
		return 0
	}
}

// AtOrWorse reports whether v is threshold or worse: what `--fail-on
// threshold` fails on. UNKNOWN is worse than every verdict, so it fails any
// threshold.
func (v Verdict) AtOrWorse(threshold Verdict) bool { return v.rank() <= threshold.rank() }

// Success reports whether the verdict lets the work through (PASS or
// PASS_WITH_WARNINGS).
func (v Verdict) Success() bool { return v == Pass || v == PassWithWarnings }

// Default thresholds.
const (
	DefaultPass             = 0.85
	DefaultPassWithWarnings = 0.70
)

// Thresholds override the score thresholds; nil (or a non-finite value)
// keeps the default.
type Thresholds struct {
	Pass             *float64 `json:"pass,omitempty"`
	PassWithWarnings *float64 `json:"passWithWarnings,omitempty"`
}

// resolve returns the thresholds in use.
func (t Thresholds) resolve() (pass, warn float64) {
	pass, warn = DefaultPass, DefaultPassWithWarnings
	if t.Pass != nil && finite(*t.Pass) {
		pass = *t.Pass
	}
	if t.PassWithWarnings != nil && finite(*t.PassWithWarnings) {
		warn = *t.PassWithWarnings
	}
	return pass, warn
}

// Check reports the first problem with caller-supplied thresholds: each must
// be a finite number in [0,1], and passWithWarnings must not exceed pass.
func (t Thresholds) Check() error {
	for _, f := range []struct {
		name string
		v    *float64
	}{{"pass", t.Pass}, {"passWithWarnings", t.PassWithWarnings}} {
		if f.v != nil && (!finite(*f.v) || *f.v < 0 || *f.v > 1) {
			return fmt.Errorf("threshold %s: want a number in [0,1], got %v", f.name, *f.v)
		}
	}
	pass, warn := t.resolve()
	if warn > pass {
		return fmt.Errorf("threshold passWithWarnings %v is above pass %v", warn, pass)
	}
	return nil
}

// Artifact is an artifact to validate with an evaluation.
type Artifact struct {
	Kind    string `json:"kind"`
	Content any    `json:"content"`
}

// Input is everything an evaluation looks at.
type Input struct {
	TaskID string
	// Metrics are values in [0,1] by name; missing and non-finite ones are
	// left out of the weighting. confidence, cost and latency are kept but
	// never weighted.
	Metrics     map[string]float64
	Tests       *Tests
	Regressions []string
	// Weightings override the default weights per key (and may add keys).
	Weightings map[string]float64
	Thresholds Thresholds
	// Artifact, when set, is validated; its score becomes the
	// artifactValidity metric unless the caller gave one.
	Artifact *Artifact
}

// Evaluation is the output of the verdict rules (docs/verdict.md).
type Evaluation struct {
	TaskID          string             `json:"taskId"`
	Success         bool               `json:"success"`
	Verdict         Verdict            `json:"verdict"`
	Score           float64            `json:"score"`
	Confidence      float64            `json:"confidence"`
	Metrics         map[string]float64 `json:"metrics"`
	Tests           *Tests             `json:"tests,omitempty"`
	Regressions     []string           `json:"regressions"`
	Recommendations []string           `json:"recommendations"`
	Artifact        *ArtifactResult    `json:"artifact,omitempty"`
}

// Evaluate scores in, applies the verdict rules in the contract's order and
// writes the recommendations. The returned metrics hold the finite input
// metrics plus any derived testResults and artifactValidity.
func Evaluate(in Input) Evaluation {
	metrics := make(map[string]float64, len(in.Metrics)+2)
	for k, v := range in.Metrics {
		if finite(v) {
			metrics[k] = v
		}
	}
	var tests *Tests
	if in.Tests != nil {
		t := *in.Tests
		if t.Total != nil {
			n := *t.Total
			t.Total = &n
		}
		tests = &t
		if _, ok := metrics[TestResults]; !ok {
			metrics[TestResults] = TestMetrics(t).TestResults
		}
	}
	var art *ArtifactResult
	if in.Artifact != nil {
		r := ValidateArtifact(in.Artifact.Kind, in.Artifact.Content)
		art = &r
		if _, ok := metrics[ArtifactValidity]; !ok {
			metrics[ArtifactValidity] = r.Score
		}
	}

	weights := Weights(in.Weightings)
	score := WeightedScore(metrics, weights)
	pass, warn := in.Thresholds.resolve()

	weighted := false
	for k, w := range weights {
		if _, ok := metrics[k]; ok && w > 0 {
			weighted = true
			break
		}
	}

	var v Verdict
	switch {
	case !weighted && tests == nil:
		v = Unknown
	case tests != nil && tests.Failed > 0 && tests.Passed == 0:
		v = Blocked
	case score == 0 && (tests == nil || tests.Passed == 0):
		v = Blocked
	case len(in.Regressions) > 0:
		v = Fail
	case tests != nil && tests.Failed > 0:
		v = Fail
	case score < warn:
		v = Fail
	case score < pass:
		v = PassWithWarnings
	case tests != nil && tests.Skipped > 0:
		v = PassWithWarnings
	default:
		v = Pass
	}

	regressions := append([]string{}, in.Regressions...)
	return Evaluation{
		TaskID:          in.TaskID,
		Success:         v.Success(),
		Verdict:         v,
		Score:           score,
		Confidence:      ConfidenceOf(metrics, tests),
		Metrics:         metrics,
		Tests:           tests,
		Regressions:     regressions,
		Recommendations: recommend(v, metrics, tests, regressions, score, pass, art),
		Artifact:        art,
	}
}

// recommend writes the recommendations for verdict v: UNKNOWN asks for
// evidence; FAIL and BLOCKED name, in order, correctness, failing tests and
// regressions; PASS_WITH_WARNINGS says what kept it from PASS; an invalid
// artifact asks for its repair.
func recommend(v Verdict, m map[string]float64, tests *Tests, regressions []string, score, pass float64, art *ArtifactResult) []string {
	out := []string{}
	switch v {
	case Unknown:
		out = append(out, "Provide measured evidence: at least one weighted metric (such as correctness or testResults) or test results.")
	case Fail, Blocked:
		c, ok := m[Correctness]
		switch {
		case !ok:
			out = append(out, "Measure correctness: no correctness metric was given.")
		case c < 0.8:
			out = append(out, fmt.Sprintf("Improve correctness: it is %s, below 0.8.", num(c)))
		}
		if tests != nil && tests.Failed > 0 {
			out = append(out, fmt.Sprintf("Fix the %d failing %s.", tests.Failed, plural(tests.Failed, "test", "tests")))
		}
		if len(regressions) > 0 {
			out = append(out, fmt.Sprintf("Resolve the %d %s: %s.", len(regressions),
				plural(len(regressions), "regression", "regressions"), strings.Join(regressions, "; ")))
		}
	case PassWithWarnings:
		if score < pass {
			out = append(out, fmt.Sprintf("Raise the score from %s to the pass threshold %s.", num(score), num(pass)))
		}
		if tests != nil && tests.Skipped > 0 {
			out = append(out, fmt.Sprintf("Run the %d skipped %s.", tests.Skipped, plural(tests.Skipped, "test", "tests")))
		}
	}
	if art != nil && !art.Valid {
		out = append(out, fmt.Sprintf("Repair the %s artifact (%d %s) and evaluate it again.", art.Kind,
			len(art.Issues), plural(len(art.Issues), "issue", "issues")))
	}
	return out
}

func num(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", math.Round(v*1000)/1000), "0"), ".")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
