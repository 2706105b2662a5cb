package verdict

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func f(v float64) *float64 { return &v }
func n(v int) *int         { return &v }

// TestReferenceVectors is every reference vector of docs/verdict.md.
func TestReferenceVectors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    Input
		check func(t *testing.T, e Evaluation)
	}{
		{"pass with strong metrics and 42 tests", Input{
			Metrics: map[string]float64{Correctness: .95, Security: .9, Architecture: .9, TestResults: .95},
			Tests:   &Tests{Passed: 42},
		}, func(t *testing.T, e Evaluation) {
			if e.Verdict != Pass || e.Score < .85 || e.Confidence <= .5 || !e.Success {
				t.Errorf("Evaluate = %s score %v confidence %v success %v, want PASS, >= .85, > .5, true", e.Verdict, e.Score, e.Confidence, e.Success)
			}
		}},
		{"failing tests fail", Input{
			Metrics: map[string]float64{Correctness: .95},
			Tests:   &Tests{Passed: 10, Failed: 3},
		}, func(t *testing.T, e Evaluation) {
			if e.Verdict != Fail || len(e.Recommendations) == 0 || e.Success {
				t.Errorf("Evaluate = %s recommendations %q, want FAIL with recommendations", e.Verdict, e.Recommendations)
			}
		}},
		{"no passing test blocks", Input{
			Metrics: map[string]float64{Correctness: .9},
			Tests:   &Tests{Failed: 5},
		}, func(t *testing.T, e Evaluation) {
			if e.Verdict != Blocked {
				t.Errorf("Evaluate = %s, want BLOCKED", e.Verdict)
			}
		}},
		{"regression fails and is echoed", Input{
			Metrics:     map[string]float64{Correctness: .95, TestResults: .95},
			Regressions: []string{"login broken"},
		}, func(t *testing.T, e Evaluation) {
			if e.Verdict != Fail || !cmp.Equal(e.Regressions, []string{"login broken"}) {
				t.Errorf("Evaluate = %s regressions %q, want FAIL [login broken]", e.Verdict, e.Regressions)
			}
		}},
		{"between thresholds warns", Input{
			Metrics:    map[string]float64{Correctness: .72},
			Thresholds: Thresholds{Pass: f(.85), PassWithWarnings: f(.70)},
		}, func(t *testing.T, e Evaluation) {
			if e.Verdict != PassWithWarnings {
				t.Errorf("Evaluate = %s, want PASS_WITH_WARNINGS", e.Verdict)
			}
		}},
		{"low correctness fails", Input{Metrics: map[string]float64{Correctness: .4}}, func(t *testing.T, e Evaluation) {
			if e.Verdict != Fail {
				t.Errorf("Evaluate = %s, want FAIL", e.Verdict)
			}
		}},
		{"no metrics is unknown", Input{}, func(t *testing.T, e Evaluation) {
			if e.Verdict != Unknown || e.Score != 0 {
				t.Errorf("Evaluate = %s score %v, want UNKNOWN 0", e.Verdict, e.Score)
			}
		}},
		{"custom thresholds warn", Input{
			Metrics:    map[string]float64{Correctness: .85},
			Thresholds: Thresholds{Pass: f(.9), PassWithWarnings: f(.8)},
		}, func(t *testing.T, e Evaluation) {
			if e.Verdict != PassWithWarnings {
				t.Errorf("Evaluate = %s, want PASS_WITH_WARNINGS", e.Verdict)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.check(t, Evaluate(tt.in))
		})
	}
}

func TestWeightedScoreVectors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		metrics map[string]float64
		weights map[string]float64
		want    float64
	}{
		{"correctness alone", map[string]float64{Correctness: 1}, nil, 1},
		{"correctness and security", map[string]float64{Correctness: 1, Security: 1}, nil, 1},
		{"renormalised", map[string]float64{Correctness: 1, Security: 0}, nil, 0.75},
		{"none", map[string]float64{}, nil, 0},
		{"unweighted ignored", map[string]float64{Correctness: .5, Confidence: 1, Cost: 9, Latency: 30}, nil, .5},
		{"NaN ignored", map[string]float64{Correctness: .5, Security: math.NaN()}, nil, .5},
		{"+Inf ignored", map[string]float64{Correctness: .5, Security: math.Inf(1)}, nil, .5},
		{"-Inf ignored", map[string]float64{Correctness: .5, Security: math.Inf(-1)}, nil, .5},
		{"override per key", map[string]float64{Correctness: 1, Security: 0}, map[string]float64{Security: .3}, .5},
		{"new key weighted", map[string]float64{Correctness: 1, "usability": 0}, map[string]float64{"usability": .3}, .5},
		{"zero weight drops key", map[string]float64{Correctness: 1, Security: 0}, map[string]float64{Security: 0}, 1},
		{"weighting for unweighted metric ignored", map[string]float64{Correctness: 1, Cost: 0}, map[string]float64{Cost: 1}, 1},
		{"negative weighting ignored", map[string]float64{Correctness: 1, Security: 0}, map[string]float64{Security: -1}, .75},
		{"NaN weighting ignored", map[string]float64{Correctness: 1, Security: 0}, map[string]float64{Security: math.NaN()}, .75},
		{"exact at .85", map[string]float64{Correctness: .85}, nil, .85},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := WeightedScore(tt.metrics, Weights(tt.weights))
			if math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("WeightedScore(%v, %v) = %v, want %v", tt.metrics, tt.weights, got, tt.want)
			}
		})
	}
}

func TestTestMetrics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		in               Tests
		lo, hi           float64 // testResults bounds, inclusive
		minConf, maxConf float64
		wantTotal        int
	}{
		{"100 passed", Tests{Passed: 100}, 1, 1, .85, 1, 100},
		{"99 passed 1 failed", Tests{Passed: 99, Failed: 1}, .7001, .9999, .85, 1, 100},
		{"no tests", Tests{}, 0, 0, 0, 0, 0},
		{"total zero overrides", Tests{Passed: 3, Total: n(0)}, 0, 0, 0, 0, 0},
		{"total overrides denominator", Tests{Passed: 5, Total: n(10)}, .5, .5, .5, .5, 10},
		{"clamped at zero", Tests{Passed: 1, Failed: 9}, 0, 0, .5, .5, 10},
		{"skipped not counted", Tests{Passed: 10, Skipped: 5}, 1, 1, .5, .5, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := TestMetrics(tt.in)
			if got.TestResults < tt.lo || got.TestResults > tt.hi || got.Confidence < tt.minConf || got.Confidence > tt.maxConf || got.Total != tt.wantTotal {
				t.Errorf("TestMetrics(%+v) = %+v, want testResults in [%v,%v], confidence in [%v,%v], total %d",
					tt.in, got, tt.lo, tt.hi, tt.minConf, tt.maxConf, tt.wantTotal)
			}
		})
	}
	// 99/1 exactly: 0.99 - 0.25.
	if got := TestMetrics(Tests{Passed: 99, Failed: 1}).TestResults; math.Abs(got-.74) > 1e-9 {
		t.Errorf("TestMetrics(99/1).TestResults = %v, want 0.74", got)
	}
}

func TestConfidence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		metrics map[string]float64
		tests   *Tests
		want    float64
	}{
		{"nothing", nil, nil, .35},
		{"one metric", map[string]float64{Correctness: 1}, nil, .43},
		{"caller confidence as is", map[string]float64{Correctness: 1, Confidence: .12}, &Tests{Passed: 50}, .12},
		{"NaN caller confidence recomputed", map[string]float64{Correctness: 1, Confidence: math.NaN()}, nil, .43},
		{"tests add passed/100", map[string]float64{Correctness: 1}, &Tests{Passed: 5}, .48},
		{"tests add at most .2", map[string]float64{Correctness: 1}, &Tests{Passed: 500}, .63},
		{"custom metrics not measured", map[string]float64{"usability": 1}, nil, .35},
		{"unweighted not measured", map[string]float64{Cost: 1, Latency: 1}, nil, .35},
		{"non-finite not measured", map[string]float64{Correctness: math.Inf(1)}, nil, .35},
		{"capped at .97", map[string]float64{Correctness: 1, RequirementCoverage: 1, TestResults: 1, Architecture: 1,
			Security: 1, Performance: 1, Maintainability: 1, ArtifactValidity: 1}, &Tests{Passed: 100}, .97},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ConfidenceOf(tt.metrics, tt.tests); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("ConfidenceOf(%v, %+v) = %v, want %v", tt.metrics, tt.tests, got, tt.want)
			}
		})
	}
	// A derived testResults counts as measured.
	e := Evaluate(Input{Tests: &Tests{Passed: 100}})
	if math.Abs(e.Confidence-.63) > 1e-9 {
		t.Errorf("Evaluate(tests 100/0).Confidence = %v, want 0.63", e.Confidence)
	}
}

// TestVerdictRules reaches every rule on its own, and each threshold on both
// sides of its boundary.
func TestVerdictRules(t *testing.T) {
	t.Parallel()
	c := func(v float64) map[string]float64 { return map[string]float64{Correctness: v} }
	tests := []struct {
		name string
		in   Input
		want Verdict
	}{
		{"1 unknown: nothing", Input{}, Unknown},
		{"1 unknown: only unweighted metrics", Input{Metrics: map[string]float64{Confidence: .9, Cost: .1, Latency: 2}}, Unknown},
		{"1 unknown: only non-finite metrics", Input{Metrics: map[string]float64{Correctness: math.NaN(), Security: math.Inf(1)}}, Unknown},
		{"1 unknown: only zero-weighted metric", Input{Metrics: c(1), Weightings: map[string]float64{Correctness: 0}}, Unknown},
		{"1 unknown: regressions without evidence", Input{Regressions: []string{"x"}}, Unknown},
		{"2 blocked: failed and none passed", Input{Metrics: c(1), Tests: &Tests{Failed: 1}}, Blocked},
		{"2 blocked: beats regressions", Input{Metrics: c(1), Tests: &Tests{Failed: 2}, Regressions: []string{"x"}}, Blocked},
		{"3 blocked: score zero, no tests", Input{Metrics: c(0)}, Blocked},
		{"3 blocked: score zero, empty tests", Input{Tests: &Tests{}}, Blocked},
		{"3 not blocked: score zero but a test passed", Input{Metrics: map[string]float64{Correctness: 0, TestResults: 0}, Tests: &Tests{Passed: 1}}, Fail},
		{"4 fail: regression", Input{Metrics: c(1), Regressions: []string{"x"}}, Fail},
		{"4 fail: regression beats perfect tests", Input{Metrics: c(1), Tests: &Tests{Passed: 10}, Regressions: []string{"x"}}, Fail},
		{"5 fail: one failed test", Input{Metrics: map[string]float64{Correctness: 1, TestResults: 1}, Tests: &Tests{Passed: 99, Failed: 1}}, Fail},
		{"6 fail: just below warn", Input{Metrics: c(.6999)}, Fail},
		{"6 at warn is not fail", Input{Metrics: c(.70)}, PassWithWarnings},
		{"7 warn: just below pass", Input{Metrics: c(.8499)}, PassWithWarnings},
		{"7 at pass passes", Input{Metrics: c(.85)}, Pass},
		{"8 warn: skipped tests", Input{Metrics: c(1), Tests: &Tests{Passed: 10, Skipped: 1}}, PassWithWarnings},
		{"9 pass", Input{Metrics: c(1), Tests: &Tests{Passed: 10}}, Pass},
		{"9 pass: NaN metric renormalised away", Input{Metrics: map[string]float64{Correctness: .9, Security: math.NaN()}}, Pass},
		{"threshold override: warn at 0.5", Input{Metrics: c(.55), Thresholds: Thresholds{PassWithWarnings: f(.5)}}, PassWithWarnings},
		{"threshold override: pass at 0.5", Input{Metrics: c(.5), Thresholds: Thresholds{Pass: f(.5), PassWithWarnings: f(.4)}}, Pass},
		{"threshold override: NaN keeps default", Input{Metrics: c(.8), Thresholds: Thresholds{Pass: f(math.NaN())}}, PassWithWarnings},
		{"artifact alone is evidence", Input{Artifact: &Artifact{Kind: "raw", Content: "anything"}}, Pass},
		{"invalid artifact lowers the score", Input{Artifact: &Artifact{Kind: KindTrace, Content: "x"}}, Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Evaluate(tt.in)
			if got.Verdict != tt.want {
				t.Errorf("Evaluate(%+v).Verdict = %s (score %v), want %s", tt.in, got.Verdict, got.Score, tt.want)
			}
			if got.Success != (tt.want == Pass || tt.want == PassWithWarnings) {
				t.Errorf("Evaluate(%+v).Success = %v for %s", tt.in, got.Success, got.Verdict)
			}
		})
	}
}

func TestRecommendations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Input
		want []string
	}{
		{"unknown asks for evidence", Input{}, []string{
			"Provide measured evidence: at least one weighted metric (such as correctness or testResults) or test results."}},
		{"fail in order", Input{Metrics: map[string]float64{Correctness: .5}, Tests: &Tests{Passed: 3, Failed: 2},
			Regressions: []string{"login broken", "search slow"}}, []string{
			"Improve correctness: it is 0.5, below 0.8.",
			"Fix the 2 failing tests.",
			"Resolve the 2 regressions: login broken; search slow.",
		}},
		{"blocked without correctness", Input{Tests: &Tests{Failed: 1}}, []string{
			"Measure correctness: no correctness metric was given.",
			"Fix the 1 failing test.",
		}},
		{"fail with good correctness names only the rest", Input{Metrics: map[string]float64{Correctness: .9}, Regressions: []string{"r"}}, []string{
			"Resolve the 1 regression: r.",
		}},
		{"pass has none", Input{Metrics: map[string]float64{Correctness: 1}}, []string{}},
		{"warn names the gap and skipped tests", Input{Metrics: map[string]float64{Correctness: .8, TestResults: .8}, Tests: &Tests{Passed: 4, Skipped: 2}}, []string{
			"Raise the score from 0.8 to the pass threshold 0.85.",
			"Run the 2 skipped tests.",
		}},
		{"invalid artifact asks for repair", Input{Metrics: map[string]float64{Correctness: 1}, Artifact: &Artifact{Kind: KindTrace, Content: "x"}}, []string{
			"Repair the trace artifact (3 issues) and evaluate it again.",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Evaluate(tt.in).Recommendations
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Evaluate(%+v).Recommendations mismatch (-want +got):\n%s", tt.in, d)
			}
		})
	}
}

func TestEvaluationJSON(t *testing.T) {
	t.Parallel()
	e := Evaluate(Input{
		TaskID:  "t-1",
		Metrics: map[string]float64{Correctness: .96, Security: .93, Latency: math.Inf(1)},
		Tests:   &Tests{Passed: 42},
	})
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatalf("json.Marshal(Evaluation) = %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"taskId", "success", "verdict", "score", "confidence", "metrics", "tests", "regressions", "recommendations"} {
		if _, ok := got[k]; !ok {
			t.Errorf("Evaluation JSON %s lacks %q", b, k)
		}
	}
	if _, ok := got["artifact"]; ok {
		t.Errorf("Evaluation JSON %s has artifact without validation", b)
	}
	wantMetrics := map[string]any{"correctness": .96, "security": .93, "testResults": 1.0}
	if d := cmp.Diff(wantMetrics, got["metrics"]); d != "" {
		t.Errorf("metrics mismatch (-want +got):\n%s", d)
	}
	if !strings.Contains(string(b), `"regressions":[]`) || !strings.Contains(string(b), `"recommendations":[]`) {
		t.Errorf("Evaluation JSON %s: want empty lists, not null", b)
	}
}

func TestVerdictOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v, threshold Verdict
		want         bool
	}{
		{Pass, Pass, true},
		{Pass, PassWithWarnings, false},
		{PassWithWarnings, PassWithWarnings, true},
		{PassWithWarnings, Fail, false},
		{Fail, PassWithWarnings, true},
		{Fail, Fail, true},
		{Fail, Blocked, false},
		{Blocked, Fail, true},
		{Blocked, Blocked, true},
		{Unknown, Blocked, true},
		{Unknown, Pass, true},
		{Pass, Unknown, false},
		{Blocked, Unknown, false},
		{Unknown, Unknown, true},
	}
	for _, tt := range tests {
		if got := tt.v.AtOrWorse(tt.threshold); got != tt.want {
			t.Errorf("%s.AtOrWorse(%s) = %v, want %v", tt.v, tt.threshold, got, tt.want)
		}
	}
	for in, want := range map[string]Verdict{"pass": Pass, "pass-with-warnings": PassWithWarnings, " FAIL ": Fail, "blocked": Blocked, "Unknown": Unknown} {
		if got, err := ParseVerdict(in); err != nil || got != want {
			t.Errorf("ParseVerdict(%q) = %v, %v, want %v", in, got, err, want)
		}
	}
	if _, err := ParseVerdict("GREAT"); err == nil {
		t.Errorf("ParseVerdict(%q) = nil error, want one", "GREAT")
	}
}

func TestThresholdsCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Thresholds
		ok   bool
	}{
		{"defaults", Thresholds{}, true},
		{"both", Thresholds{Pass: f(.9), PassWithWarnings: f(.8)}, true},
		{"above one", Thresholds{Pass: f(1.5)}, false},
		{"negative", Thresholds{PassWithWarnings: f(-.1)}, false},
		{"NaN", Thresholds{Pass: f(math.NaN())}, false},
		{"warn above pass", Thresholds{Pass: f(.6)}, false},
	}
	for _, tt := range tests {
		if err := tt.in.Check(); (err == nil) != tt.ok {
			t.Errorf("Thresholds(%s).Check() = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

func TestFromRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   RunEvidence
		want Input
		v    Verdict
	}{
		{"all good", RunEvidence{TaskID: "c1", MeanKPIScore: .9, ChecksPassed: 20, TasksScored: 4, TasksTotal: 4},
			Input{TaskID: "c1", Metrics: map[string]float64{Correctness: .9, RequirementCoverage: 1}, Tests: &Tests{Passed: 20}}, Pass},
		{"failed checks and coverage", RunEvidence{MeanKPIScore: .7, ChecksPassed: 6, ChecksFailed: 2, TasksScored: 3, TasksTotal: 4, Regressions: []string{"t2"}},
			Input{Metrics: map[string]float64{Correctness: .7, RequirementCoverage: .75}, Tests: &Tests{Passed: 6, Failed: 2}, Regressions: []string{"t2"}}, Fail},
		{"nothing scored", RunEvidence{TasksTotal: 3},
			Input{Metrics: map[string]float64{RequirementCoverage: 0}}, Blocked},
		{"empty pack", RunEvidence{}, Input{Metrics: map[string]float64{}}, Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := FromRun(tt.in)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("FromRun(%+v) mismatch (-want +got):\n%s", tt.in, d)
			}
			if v := Evaluate(got).Verdict; v != tt.v {
				t.Errorf("Evaluate(FromRun(%+v)).Verdict = %s, want %s", tt.in, v, tt.v)
			}
		})
	}
}
