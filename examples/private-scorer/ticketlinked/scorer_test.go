package ticketlinked_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assay-eval/assay/examples/private-scorer/ticketlinked"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/sdktest"
)

var state = &sdk.Snapshot{Tasks: []sdk.StateTask{
	{ID: "REL-101", Title: "Investigate the production build blocker", State: "open"},
	{ID: "REL-10", Title: "Older release task", State: "done"},
	{ID: "OPS-7", Title: "Rotate the on-call", State: "open"},
}}

func newCase(t *testing.T, kpis map[string]any, answer string, after *sdk.Snapshot) *sdk.Case {
	t.Helper()
	raw := map[string]json.RawMessage{}
	for k, v := range kpis {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		raw[k] = b
	}
	return &sdk.Case{ID: "c", Task: sdk.Task{Label: "link", KPIs: raw}, Turn: sdk.Turn{Answer: answer}, StateAfter: after}
}

func TestScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		kpis   map[string]any
		answer string
		after  *sdk.Snapshot
		want   *sdk.Result
	}{
		{
			name: "cites an existing task", kpis: map[string]any{"ticket_linked": true},
			answer: "Filed as rel-101 for the release lead.", after: state,
			want: &sdk.Result{Score: 1, Checks: []sdk.Check{{KPI: "ticket_linked", Score: 1, Passed: true,
				Detail: "the answer cites existing task REL-101", Evidence: []string{"REL-101"}}}},
		},
		{
			name: "a longer id is not a prefix match", kpis: map[string]any{"ticket_linked": true},
			answer: "Filed as REL-1011.", after: state,
			want: &sdk.Result{Checks: []sdk.Check{{KPI: "ticket_linked", Detail: "the answer cites no task that exists in state_after",
				FailureTag: "ungrounded_answer"}}, FailureTags: []string{"ungrounded_answer"}},
		},
		{
			name: "no citation wanted", kpis: map[string]any{"ticket_linked": false},
			answer: "Nothing to file.", after: state,
			want: &sdk.Result{Score: 1, Checks: []sdk.Check{{KPI: "ticket_linked", Score: 1, Passed: true, Detail: "the answer cites no task, as wanted"}}},
		},
		{
			name: "prefix with an invented id", kpis: map[string]any{"ticket_linked": true, "ticket_prefix": "REL-"},
			answer: "See REL-101 and REL-999.", after: state,
			want: &sdk.Result{Score: 0.75, Checks: []sdk.Check{
				{KPI: "ticket_linked", Score: 1, Passed: true, Detail: "the answer cites existing task REL-101", Evidence: []string{"REL-101"}},
				{KPI: "ticket_prefix", Score: 0.5, Detail: "cites REL-101; also ids not in state_after: REL-999",
					Evidence: []string{"REL-101", "REL-999"}, FailureTag: "ungrounded_answer"},
			}, FailureTags: []string{"ungrounded_answer"}},
		},
		{
			name: "wrong prefix", kpis: map[string]any{"ticket_prefix": "REL-"},
			answer: "Tracked in OPS-7.", after: state,
			want: &sdk.Result{Checks: []sdk.Check{{KPI: "ticket_prefix",
				Detail: `cites no existing task starting with "REL-"; ids without prefix "REL-": OPS-7`, FailureTag: "ungrounded_answer"}},
				FailureTags: []string{"ungrounded_answer"}},
		},
		{
			name: "no state after", kpis: map[string]any{"ticket_linked": true},
			answer: "Filed as REL-101.",
			want: &sdk.Result{Checks: []sdk.Check{{KPI: "ticket_linked", Detail: "the answer cites no task that exists in state_after",
				FailureTag: "ungrounded_answer"}}, FailureTags: []string{"ungrounded_answer"},
				Diagnostics: []string{"no state_after snapshot: cannot tell which tasks exist"}},
		},
		{
			name: "wrong value type", kpis: map[string]any{"ticket_linked": "yes"},
			answer: "REL-101", after: state,
			want: &sdk.Result{
				Checks: []sdk.Check{{KPI: "ticket_linked", FailureTag: "ungrounded_answer",
					Detail: `kpi ticket_linked: want true or false, got a string ("yes"); the check cannot run`}},
				FailureTags: []string{"ungrounded_answer"},
				Diagnostics: []string{`kpi ticket_linked: want true or false, got a string ("yes")`}},
		},
		{
			name: "no KPI of this scorer", kpis: map[string]any{"answer_keywords": []string{"x"}},
			answer: "REL-101", after: state,
			want: &sdk.Result{Checks: []sdk.Check{}, Diagnostics: []string{
				`nothing to check: task "link" sets none of the KPI keys ticket_linked checks (ticket_linked, ticket_prefix)`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCase(t, tt.kpis, tt.answer, tt.after)
			got, err := ticketlinked.New().Score(context.Background(), c)
			if err != nil {
				t.Fatalf("Score(%q) error = %v", tt.answer, err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Score(%q) (-want +got):\n%s", tt.answer, diff)
			}
		})
	}
}

// TestConformance runs the SDK's conformance kit over real gRPC: Describe is
// valid, scores are in [0,1], results are deterministic, cancellation is
// honoured and concurrent calls are safe.
func TestConformance(t *testing.T) {
	sdktest.Run(t, ticketlinked.New())
	sdktest.Run(t, ticketlinked.New(),
		newCase(t, map[string]any{"ticket_linked": true, "ticket_prefix": "REL-"}, "Filed REL-101.", state),
		newCase(t, map[string]any{"ticket_linked": true}, "No ticket.", state),
	)
}
