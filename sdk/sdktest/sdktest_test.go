package sdktest_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/sdktest"
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

func failing(rep sdktest.Report) map[string]int {
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
		{"bad id", fake{id: "Fake-Scorer", score: 0.5, checkKPI: "tool_used"}, []string{sdktest.CheckDescribe}},
		{"score out of range", fake{id: "fake_scorer", score: 1.5, checkKPI: "tool_used"}, []string{sdktest.CheckScoresInRange}},
		{"undeclared kpi", fake{id: "fake_scorer", score: 0.5, checkKPI: "latency"}, []string{sdktest.CheckDeclaredKPIs}},
		{"not deterministic", fake{id: "fake_scorer", checkKPI: "tool_used", calls: new(atomic.Int64)}, []string{sdktest.CheckDeterministic, sdktest.CheckConcurrency}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, stop, err := sdktest.Serve(tt.s)
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
			defer stop()
			rep := sdktest.Check(context.Background(), c)
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
type ignoreCancel struct{ sdktest.Client }

func (c ignoreCancel) Score(_ context.Context, cases []*sdk.Case) ([]sdk.Outcome, error) {
	return c.Client.Score(context.Background(), cases)
}

func TestCheckCancellation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		wrap func(sdktest.Client) sdktest.Client
		want []string // the checks that must fail
	}{
		{"honoured", func(c sdktest.Client) sdktest.Client { return c }, nil},
		{"ignored", func(c sdktest.Client) sdktest.Client { return ignoreCancel{c} }, []string{sdktest.CheckCancellation}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, stop, err := sdktest.Serve(fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used"})
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
			defer stop()
			rep := sdktest.Check(context.Background(), tt.wrap(c))
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
	got := strings.Join(sdktest.ValidateDescription(d), "; ")
	want := `version is empty; KPI key "a" is declared twice; KPI key "a" has unknown value type "float"; KPI key "B" is not snake_case; unknown need "everything"`
	if got != want {
		t.Errorf("ValidateDescription() = %s, want %s", got, want)
	}
}

func TestRun(t *testing.T) {
	sdktest.Run(t, fake{id: "fake_scorer", score: 0.5, checkKPI: "tools"})
}

func TestCasesCoverDeclaredKPIs(t *testing.T) {
	d := fake{id: "f"}.Describe()
	for _, c := range sdktest.Cases(d) {
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
