package conformance_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/pkg/batchrun"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/conformance"
)

// fake is a configurable scorer: a well-behaved one by default.
type fake struct {
	id       sdk.ID
	score    float64
	checkKPI string
	calls    *atomic.Int64 // when set, the score drifts with every call
}

func (f fake) Describe() sdk.Description {
	return sdk.Description{
		ID: f.id, Version: "0.1.0",
		KPIs:  []sdk.KPI{{Key: "tool_used", ValueType: sdk.Bool}, {Key: "tools", ValueType: sdk.StringList}},
		Needs: []sdk.Need{sdk.NeedTrace},
	}
}

func (f fake) Score(ctx context.Context, c *sdk.Case) (*sdk.Result, error) {
	s := f.score
	if f.calls != nil {
		s = float64(f.calls.Add(1)%10) / 10
	}
	if len(c.Turn.ToolCalls) > 0 && f.score == 0.5 && f.calls == nil {
		s = 1
	}
	return &sdk.Result{Score: s, Checks: []sdk.Check{{KPI: f.checkKPI, Score: min(max(s, 0), 1), Passed: s == 1}}}, nil
}

func failing(rep conformance.Report) map[string]int {
	got := map[string]int{}
	for _, r := range rep {
		if !r.OK() {
			got[r.Name] = len(r.Problems)
		}
	}
	return got
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    sdk.Scorer
		want []string // the checks that must fail
	}{
		{"conforming", fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used"}, nil},
		{"bad id", fake{id: "Fake-Scorer", score: 0.5, checkKPI: "tool_used"}, []string{conformance.CheckDescribe}},
		{"score out of range", fake{id: "fake_scorer", score: 1.5, checkKPI: "tool_used"}, []string{conformance.CheckScoresInRange}},
		{"undeclared kpi", fake{id: "fake_scorer", score: 0.5, checkKPI: "latency"}, []string{conformance.CheckDeclaredKPIs}},
		{"not deterministic", fake{id: "fake_scorer", checkKPI: "tool_used", calls: new(atomic.Int64)}, []string{conformance.CheckDeterministic, conformance.CheckConcurrency}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, stop, err := conformance.Serve(tt.s)
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
			defer stop()
			rep := conformance.Check(context.Background(), c)
			var got []string
			for name := range failing(rep) {
				got = append(got, name)
			}
			if diff := cmp.Diff(tt.want, got, cmpSorted); diff != "" {
				t.Errorf("Check(%s) failing checks (-want +got):\n%s\nreport: %+v", tt.name, diff, rep)
			}
			if len(rep) != 6 && len(tt.want) == 0 {
				t.Errorf("Check(%s) ran %d checks, want 6", tt.name, len(rep))
			}
		})
	}
}

var cmpSorted = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
})

// ignoreCancel is a transport that drops the caller's context, as a broken
// client or server would: a cancelled call still scores every case.
type ignoreCancel struct{ conformance.Client }

func (c ignoreCancel) Score(_ context.Context, cases []*sdk.Case) ([]batchrun.Outcome, error) {
	return c.Client.Score(context.Background(), cases)
}

func TestCheckCancellation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		wrap func(conformance.Client) conformance.Client
		want []string // the checks that must fail
	}{
		{"honoured", func(c conformance.Client) conformance.Client { return c }, nil},
		{"ignored", func(c conformance.Client) conformance.Client { return ignoreCancel{c} }, []string{conformance.CheckCancellation}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, stop, err := conformance.Serve(fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used"})
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
			defer stop()
			rep := conformance.Check(context.Background(), tt.wrap(c))
			var got []string
			for name := range failing(rep) {
				got = append(got, name)
			}
			if diff := cmp.Diff(tt.want, got, cmpSorted); diff != "" {
				t.Errorf("Check(%s) failing checks (-want +got):\n%s\nreport: %+v", tt.name, diff, rep)
			}
		})
	}
}

func TestValidateDescription(t *testing.T) {
	t.Parallel()
	d := sdk.Description{
		ID: "x_y", Version: "",
		KPIs:  []sdk.KPI{{Key: "a", ValueType: sdk.Bool}, {Key: "a", ValueType: "float"}, {Key: "B", ValueType: sdk.Any}},
		Needs: []sdk.Need{"trace", "everything"},
	}
	got := strings.Join(conformance.ValidateDescription(d), "; ")
	want := `version is empty; KPI key "a" is declared twice; KPI key "a" has unknown value type "float"; KPI key "B" is not snake_case; unknown need "everything"`
	if got != want {
		t.Errorf("ValidateDescription() = %s, want %s", got, want)
	}
}

func TestCheckScorer(t *testing.T) {
	t.Parallel()
	rep, err := conformance.CheckScorer(context.Background(), fake{id: "fake_scorer", score: 0.5, checkKPI: "tools"})
	if err != nil {
		t.Fatalf("CheckScorer() error = %v", err)
	}
	var names []string
	for _, r := range rep {
		names = append(names, r.Name)
		if !r.OK() {
			t.Errorf("CheckScorer() %s: %v", r.Name, r.Problems)
		}
	}
	want := []string{conformance.CheckDescribe, conformance.CheckScoresInRange, conformance.CheckDeclaredKPIs,
		conformance.CheckDeterministic, conformance.CheckCancellation, conformance.CheckConcurrency, conformance.CheckDirectCancellation}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("CheckScorer() checks (-want +got):\n%s", diff)
	}
}

func TestCasesCoverDeclaredKPIs(t *testing.T) {
	d := fake{id: "f"}.Describe()
	for _, c := range conformance.Cases(d) {
		if c.ID == "empty" {
			continue
		}
		for _, k := range d.KPIs {
			if _, ok := c.Task.KPIs[k.Key]; !ok {
				t.Errorf("Cases() case %q lacks KPI key %q", c.ID, k.Key)
			}
		}
	}
}
