package composite

import (
	"context"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/sdktest"
)

func up(id sdk.ID, score float64, tags []string, diags []string, checks ...sdk.Check) sdk.Upstream {
	return sdk.Upstream{Scorer: id, Result: sdk.Result{Score: score, Checks: checks, FailureTags: tags, Diagnostics: diags}}
}

func TestScore(t *testing.T) {
	t.Parallel()
	contains := sdk.Check{KPI: "tool_sequence_contains", Score: 0.5, Detail: "missing tools: x", FailureTag: "tool_missing"}
	keywords := sdk.Check{KPI: "answer_keywords", Score: 1, Passed: true, Detail: "all 3 keywords found in the answer"}
	length := sdk.Check{KPI: "min_answer_length", Score: 0.5, Detail: "the answer has 40 runes, want >= 80"}
	tests := []struct {
		name     string
		upstream []sdk.Upstream
		want     sdk.Result
	}{
		{
			name: "mean of upstream scores, not of checks",
			upstream: []sdk.Upstream{
				up("tool_sequence", 0.5, []string{"tool_missing"}, nil, contains),
				up("answer_keywords", 0.75, nil, []string{"kpi x: odd"}, keywords, length),
			},
			want: sdk.Result{
				Score:       0.625,
				Checks:      []sdk.Check{contains, keywords, length},
				FailureTags: []string{"tool_missing"},
				Diagnostics: []string{"answer_keywords: kpi x: odd"},
			},
		},
		{
			name: "failure tags are a sorted union",
			upstream: []sdk.Upstream{
				up("task_state", 0, []string{"state_not_changed"}, nil),
				up("tool_sequence", 0, []string{"tool_wrong_args", "tool_missing"}, nil),
				up("memory_grounding", 0, []string{"ungrounded_answer", "tool_missing"}, nil),
			},
			want: sdk.Result{
				Checks:      []sdk.Check{},
				FailureTags: []string{"state_not_changed", "tool_missing", "tool_wrong_args", "ungrounded_answer"},
			},
		},
		{
			name:     "a single upstream",
			upstream: []sdk.Upstream{up("answer_keywords", 1, nil, nil, keywords)},
			want:     sdk.Result{Score: 1, Checks: []sdk.Check{keywords}},
		},
		{
			name:     "an out-of-range upstream score is clamped",
			upstream: []sdk.Upstream{up("private", 1.5, nil, nil), up("other", math.NaN(), nil, nil)},
			want: sdk.Result{Score: 0.5, Checks: []sdk.Check{}, Diagnostics: []string{
				"private: score 1.5 is outside [0,1]; counted as 1", "other: score NaN is outside [0,1]; counted as 0",
			}},
		},
		{
			name: "no upstream",
			want: sdk.Result{Checks: []sdk.Check{}, Diagnostics: []string{
				`no upstream results: no other scorer declares a KPI key of task "validate_delivery_tools", so there is nothing to combine`,
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &sdk.Case{ID: "c", Task: sdk.Task{Label: "validate_delivery_tools"}, Upstream: tt.upstream}
			got, err := New().Score(context.Background(), c)
			if err != nil {
				t.Fatalf("Score() error = %v", err)
			}
			if diff := cmp.Diff(&tt.want, got, cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Score() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	d := New().Describe()
	want := sdk.Description{ID: "composite", Version: "1.0.0", KPIs: []sdk.KPI{}, Needs: []sdk.Need{sdk.NeedUpstream}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("Describe() mismatch (-want +got):\n%s", diff)
	}
}

func TestConformance(t *testing.T) {
	cases := sdktest.Cases(New().Describe())
	cases = append(cases, &sdk.Case{ID: "two", Task: sdk.Task{Label: "two"}, Upstream: []sdk.Upstream{
		up("tool_sequence", 0.5, []string{"tool_missing"}, nil, sdk.Check{KPI: "tool_sequence_contains", Score: 0.5}),
		up("answer_keywords", 1, nil, nil, sdk.Check{KPI: "answer_keywords", Score: 1, Passed: true}),
	}})
	sdktest.Run(t, New(), cases...)
}
