package pack

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/pkg/diag"
)

// TestScoringEpochFields: pass_threshold, min_pass_hat_k and
// promotion.regression_min_delta load, and each problem is reported once at
// its position.
func TestScoringEpochFields(t *testing.T) {
	t.Parallel()
	const head = "company: {id: a}\npersonas: [p]\ntasks:\n  - {label: t, persona: p, prompt: x, scorer: answer_keywords}\n"
	f := func(x float64) *float64 { return &x }
	ok := head + "scoring:\n  process_weight: 0.5\n  kpi_weight: 0.5\n  pass_threshold: 0.9\n" +
		"  min_pass_hat_k: {k: 3, value: 0.8}\n  promotion: {regression_min_delta: 0.02}\n"
	p, list := Parse("ok.yaml", []byte(ok), Options{})
	if p == nil {
		t.Fatalf("Parse(ok) = %v, want valid", list)
	}
	want := Scoring{ProcessWeight: 0.5, KPIWeight: 0.5, PassThreshold: f(0.9), MinPassHatK: &PassHatK{K: 3, Value: 0.8},
		Promotion: Promotion{RegressionMinDelta: 0.02}}
	if diff := cmp.Diff(want, p.Scoring); diff != "" {
		t.Errorf("Parse(ok).Scoring (-want +got):\n%s", diff)
	}
	if p, _ := Parse("none.yaml", []byte(head+"scoring: {process_weight: 0.5, kpi_weight: 0.5}\n"), Options{}); p == nil ||
		p.Scoring.PassThreshold != nil || p.Scoring.MinPassHatK != nil {
		t.Errorf("Parse without the fields = %+v, want them unset", p)
	}
	bad := []struct {
		name, scoring, code string
		line, col           int
	}{
		{"threshold above 1", "pass_threshold: 1.5", CodeRange, 8, 19},
		{"k zero", "min_pass_hat_k: {k: 0, value: 0.5}", CodeRange, 8, 23},
		{"k not an integer", "min_pass_hat_k: {k: 1.5, value: 0.5}", CodeType, 8, 23},
		{"value above 1", "min_pass_hat_k: {k: 2, value: 2}", CodeRange, 8, 33},
		{"value missing", "min_pass_hat_k: {k: 2}", CodeRequired, 8, 3},
		{"unknown key", "min_pass_hat_k: {k: 2, value: 0.5, n: 1}", CodeUnknownKey, 8, 38},
		{"negative min delta", "promotion: {regression_min_delta: -0.1}", CodeRange, 8, 37},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := head + "scoring:\n  process_weight: 0.5\n  kpi_weight: 0.5\n  " + tc.scoring + "\n"
			_, list := Parse("bad.yaml", []byte(src), Options{})
			if len(list) != 1 || list[0].Code != tc.code || list[0].Pos != (diag.Pos{File: "bad.yaml", Line: tc.line, Col: tc.col}) {
				t.Errorf("Parse(%s) = %v, want one %s at %d:%d", tc.scoring, list, tc.code, tc.line, tc.col)
			}
		})
	}
}
