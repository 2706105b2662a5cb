package answerkeywords

import (
	"context"
	"strings"
	"testing"

	"github.com/assay-eval/assay/plugins/internal/gradetest"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/sdktest"
)

type check = gradetest.Check

func newCase(t testing.TB, kpis map[string]any, answer string) *sdk.Case {
	t.Helper()
	return &sdk.Case{ID: "c", Task: sdk.Task{Label: "answer", KPIs: gradetest.KPIs(t, kpis)}, Turn: sdk.Turn{Answer: answer}}
}

func TestScore(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 80)
	tests := []struct {
		name   string
		kpis   map[string]any
		answer string
		want   gradetest.Want
	}{
		{
			name:   "all keywords, any case",
			kpis:   map[string]any{"answer_keywords": []string{"Pass", "blocker"}},
			answer: "PASS with one BLOCKER noted",
			want:   gradetest.Want{Score: 1, Checks: []check{{KPI: "answer_keywords", Score: 1, Passed: true, Detail: "found every keyword in the answer: Pass, blocker"}}},
		},
		{
			name:   "partial keywords",
			kpis:   map[string]any{"answer_keywords": []string{"pass", "fail", "blocker"}},
			answer: "it is a pass",
			want:   gradetest.Want{Score: 1.0 / 3, Checks: []check{{KPI: "answer_keywords", Score: 1.0 / 3, Detail: "1 of 3 keywords found in the answer; missing keywords: fail, blocker"}}},
		},
		{
			name:   "no keyword found",
			kpis:   map[string]any{"answer_keywords": []string{"pass"}},
			answer: "",
			want:   gradetest.Want{Checks: []check{{KPI: "answer_keywords", Detail: "missing keywords: pass"}}},
		},
		{
			name:   "multi-word keyword is a substring",
			kpis:   map[string]any{"answer_keywords": []string{"Company OS"}},
			answer: "we used company os memory",
			want:   gradetest.Want{Score: 1, Checks: []check{{KPI: "answer_keywords", Score: 1, Passed: true}}},
		},
		{
			name: "empty keyword list passes",
			kpis: map[string]any{"answer_keywords": []string{}},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "answer_keywords", Score: 1, Passed: true, Detail: "no keywords listed"}}},
		},
		{
			name:   "min length met",
			kpis:   map[string]any{"min_answer_length": 80},
			answer: long,
			want:   gradetest.Want{Score: 1, Checks: []check{{KPI: "min_answer_length", Score: 1, Passed: true, Detail: "80 runes, want >= 80"}}},
		},
		{
			name:   "min length partial credit",
			kpis:   map[string]any{"min_answer_length": 80},
			answer: long[:20],
			want:   gradetest.Want{Score: 0.25, Checks: []check{{KPI: "min_answer_length", Score: 0.25, Detail: "the answer has 20 runes, want >= 80"}}},
		},
		{
			name:   "min length counts runes, not bytes",
			kpis:   map[string]any{"min_answer_length": 4},
			answer: "ééé",
			want:   gradetest.Want{Score: 0.75, Checks: []check{{KPI: "min_answer_length", Score: 0.75, Detail: "3 runes"}}},
		},
		{
			name: "min length zero",
			kpis: map[string]any{"min_answer_length": 0},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "min_answer_length", Score: 1, Passed: true, Detail: "no minimum"}}},
		},
		{
			name:   "both keys: mean of checks",
			kpis:   map[string]any{"answer_keywords": []string{"pass", "fail"}, "min_answer_length": 10},
			answer: "pass",
			want: gradetest.Want{Score: (0.5 + 0.4) / 2, Checks: []check{
				{KPI: "answer_keywords", Score: 0.5, Detail: "missing keywords: fail"},
				{KPI: "min_answer_length", Score: 0.4},
			}},
		},
		{
			name:   "keywords of the wrong type",
			kpis:   map[string]any{"answer_keywords": "pass", "min_answer_length": 2},
			answer: "pass",
			want: gradetest.Want{
				Score:  0.5,
				Checks: []check{{KPI: "answer_keywords", Detail: "want a list of strings"}, {KPI: "min_answer_length", Score: 1, Passed: true}},
				Diag:   `kpi answer_keywords: want a list of strings, got a string ("pass")`,
			},
		},
		{
			name:   "length not a whole number",
			kpis:   map[string]any{"min_answer_length": 2.5},
			answer: "pass",
			want: gradetest.Want{
				Checks: []check{{KPI: "min_answer_length", Detail: "want a whole number"}},
				Diag:   "kpi min_answer_length: want a whole number, got a number (2.5)",
			},
		},
		{
			name:   "list with a non-string",
			kpis:   map[string]any{"answer_keywords": []any{"pass", 3}},
			answer: "pass",
			want:   gradetest.Want{Checks: []check{{KPI: "answer_keywords", Detail: "want a list of strings"}}, Diag: "want a list of strings, got a list"},
		},
		{
			name:   "null value",
			kpis:   map[string]any{"min_answer_length": nil},
			answer: "pass",
			want:   gradetest.Want{Checks: []check{{KPI: "min_answer_length"}}, Diag: "got null"},
		},
		{
			name:   "no keys set",
			kpis:   map[string]any{},
			answer: "pass",
			want:   gradetest.Want{Diag: "nothing to check"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := New().Score(context.Background(), newCase(t, tt.kpis, tt.answer))
			if err != nil {
				t.Fatalf("Score() error = %v", err)
			}
			gradetest.Compare(t, got, tt.want)
		})
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	gradetest.CheckDescription(t, New(), "answer_keywords",
		map[string]sdk.ValueType{"answer_keywords": sdk.StringList, "min_answer_length": sdk.Integer}, nil)
}

func TestConformance(t *testing.T) {
	sdktest.Run(t, New(), gradetest.Conformance(sdktest.Cases(New().Describe()),
		newCase(t, map[string]any{"answer_keywords": []string{"pass", "fail"}, "min_answer_length": 10}, "pass"),
		newCase(t, map[string]any{"answer_keywords": 7}, "pass"),
	)...)
}
