package taskeval

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func loadExample(t *testing.T) (*File, *AIAnswer) {
	t.Helper()
	data, err := os.ReadFile("testdata/task.json")
	if err != nil {
		t.Fatal(err)
	}
	f, diags := DecodeFile("task.json", data)
	if diags != nil {
		t.Fatal(diags)
	}
	aiText, err := os.ReadFile("testdata/ai.md")
	if err != nil {
		t.Fatal(err)
	}
	ai, diags := ParseAIAnswerFile("ai.md", aiText)
	if diags != nil {
		t.Fatal(diags)
	}
	return f, ai
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	f, ai := loadExample(t)
	det, _, why := f.Scores()
	bundle := BuildBundle(&f.Task, "")

	got, err := Evaluate("FN-101", det, ai, why, bundle)
	if err != nil {
		t.Fatalf("Evaluate() error = %v", err)
	}
	// det 38/49/40, ai 70/80/50: 26.6+21 = 47.6 -> 48; 34.3+24 = 58.3 -> 58; 28+15 = 43.
	// overall 48*.3 + 58*.45 + 43*.25 = 14.4+26.1+10.75 = 51.25 -> 51.
	want := []CategoryScore{
		{Category: AgentPerformance, DeterministicScore: 38, AIScore: 70, FinalScore: 48, Weight: 0.30, Band: Weak,
			Rationale: "Recovered from the flaky test.", Evidence: ai.Categories[AgentPerformance].Evidence},
		{Category: TaskOutcomeQuality, DeterministicScore: 49, AIScore: 80, FinalScore: 58, Weight: 0.45, Band: Weak,
			Rationale: "Retry implemented as specified.", Evidence: ai.Categories[TaskOutcomeQuality].Evidence},
		{Category: ProcessCompliance, DeterministicScore: 40, AIScore: 50, FinalScore: 43, Weight: 0.25, Band: Weak,
			Rationale: "Tests failed at merge time.", Evidence: ai.Categories[ProcessCompliance].Evidence},
	}
	if diff := cmp.Diff(want, got.CategoryScores, cmpopts.IgnoreUnexported(EvidenceRef{})); diff != "" {
		t.Errorf("Evaluate().CategoryScores mismatch (-want +got):\n%s", diff)
	}
	if got.OverallScore != 51 || got.Band != Weak || got.DeterministicOnly {
		t.Errorf("Evaluate() overall = %d %s deterministicOnly %v, want 51 weak false", got.OverallScore, got.Band, got.DeterministicOnly)
	}
	if err := got.Verify(); err != nil {
		t.Errorf("Evaluate().Verify() = %v", err)
	}
}

func TestEvaluateDeterministicOnly(t *testing.T) {
	t.Parallel()
	f, _ := loadExample(t)
	det, _, why := f.Scores()
	got, err := Evaluate("FN-101", det, nil, why, BuildBundle(&f.Task, ""))
	if err != nil {
		t.Fatalf("Evaluate(no AI) error = %v", err)
	}
	for _, cs := range got.CategoryScores {
		if cs.AIScore != cs.DeterministicScore || cs.FinalScore != cs.DeterministicScore || cs.Rationale != why || cs.Evidence == nil {
			t.Errorf("Evaluate(no AI) %s = %+v, want ai = final = deterministic, the signal rationale, empty evidence", cs.Category, cs)
		}
	}
	// 38*.3 + 49*.45 + 40*.25 = 11.4+22.05+10 = 43.45 -> 43.
	if !got.DeterministicOnly || got.OverallScore != 43 || got.Band != Weak {
		t.Errorf("Evaluate(no AI) = overall %d %s deterministicOnly %v, want 43 weak true", got.OverallScore, got.Band, got.DeterministicOnly)
	}
}

func TestEvaluateRejectsUnknownEvidence(t *testing.T) {
	t.Parallel()
	f, ai := loadExample(t)
	det, _, why := f.Scores()
	ai.Categories[ProcessCompliance].Evidence[0].ID = "workflow-7"
	_, err := Evaluate("FN-101", det, ai, why, BuildBundle(&f.Task, ""))
	if err == nil || !strings.Contains(err.Error(), `"workflow-7" is not an entry of the evidence bundle`) ||
		!strings.Contains(err.Error(), "ai.md:") {
		t.Errorf("Evaluate() error = %v, want workflow-7 rejected by name at its position in ai.md", err)
	}
}

func TestResultVerify(t *testing.T) {
	t.Parallel()
	f, ai := loadExample(t)
	det, _, why := f.Scores()
	tests := []struct {
		name   string
		mutate func(r *Result)
		want   string
	}{
		{"final not the blend", func(r *Result) { r.CategoryScores[0].FinalScore = 70 }, "do not match the blend"},
		{"band not the final's", func(r *Result) { r.CategoryScores[1].Band = Excellent }, "do not match the blend"},
		{"weight changed", func(r *Result) { r.CategoryScores[2].Weight = 0.5 }, "do not match the blend"},
		{"overall not derived", func(r *Result) { r.OverallScore = 90 }, "overallScore 90 band weak do not match"},
		{"wrong order", func(r *Result) { r.CategoryScores[0], r.CategoryScores[1] = r.CategoryScores[1], r.CategoryScores[0] }, "categoryScores[0] is"},
		{"two categories", func(r *Result) { r.CategoryScores = r.CategoryScores[:2] }, "want 3 category scores"},
		{"ai score out of range", func(r *Result) { r.CategoryScores[0].AIScore = 120 }, "aiScore must be an integer between 0 and 100"},
		{"final out of range", func(r *Result) { r.CategoryScores[2].FinalScore = -3 }, "processCompliance.finalScore must be an integer between 0 and 100"},
		{"blank rationale", func(r *Result) { r.CategoryScores[0].Rationale = " " }, "rationale must not be blank"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Evaluate("FN-101", det, ai, why, BuildBundle(&f.Task, ""))
			if err != nil {
				t.Fatal(err)
			}
			tt.mutate(r)
			if err := r.Verify(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Verify() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
