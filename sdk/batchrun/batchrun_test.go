package batchrun_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/batchrun"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// byLabel scores each case by what its label asks for.
type byLabel struct{ inFlight, peak *atomic.Int64 }

func (byLabel) Describe() sdk.Description {
	return sdk.Description{ID: "by_label", Version: "1", KPIs: []sdk.KPI{{Key: "k", ValueType: sdk.Bool}}}
}

func (b byLabel) Score(ctx context.Context, c *sdk.Case) (*sdk.Result, error) {
	if b.inFlight != nil {
		n := b.inFlight.Add(1)
		defer b.inFlight.Add(-1)
		for {
			p := b.peak.Load()
			if n <= p || b.peak.CompareAndSwap(p, n) {
				break
			}
		}
	}
	switch c.Task.Label {
	case "panic":
		panic("boom")
	case "error":
		return nil, errors.New("cannot score")
	case "nil":
		return nil, nil
	case "high":
		return &sdk.Result{Score: 1.5}, nil
	case "nan":
		return &sdk.Result{Score: math.NaN()}, nil
	case "bad_check":
		return &sdk.Result{Score: 1, Checks: []sdk.Check{{KPI: "k", Score: -0.1}}}, nil
	}
	return &sdk.Result{Score: 0.25, Checks: []sdk.Check{{KPI: "k", Score: 0.25}}}, nil
}

func TestScore(t *testing.T) {
	t.Parallel()
	labels := []string{"ok", "panic", "error", "nil", "high", "nan", "bad_check", "ok"}
	var cases []*sdk.Case
	for _, l := range labels {
		cases = append(cases, &sdk.Case{ID: l, Task: sdk.Task{Label: l}})
	}
	outs := batchrun.Score(context.Background(), byLabel{}, cases, 0)
	var got []string
	for _, o := range outs {
		if o.Err != nil {
			got = append(got, "error: "+o.Err.Error())
			continue
		}
		got = append(got, "ok")
	}
	want := []string{
		"ok",
		"error: scorer panicked: boom",
		"error: cannot score",
		"error: scorer returned no result and no error",
		"error: invalid result: score 1.5 is not in [0,1]",
		"error: invalid result: score NaN is not in [0,1]",
		"error: invalid result: check 0 (k) score -0.1 is not in [0,1]",
		"ok",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Score() outcomes (-want +got):\n%s", diff)
	}
}

func TestScoreCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	outs := batchrun.Score(ctx, byLabel{}, []*sdk.Case{{ID: "a"}, {ID: "b"}, {ID: "c"}}, 0)
	for i, o := range outs {
		if !errors.Is(o.Err, context.Canceled) {
			t.Errorf("Score(cancelled)[%d].Err = %v, want context.Canceled", i, o.Err)
		}
	}
}

func TestScoreBounded(t *testing.T) {
	t.Parallel()
	s := byLabel{inFlight: new(atomic.Int64), peak: new(atomic.Int64)}
	cases := make([]*sdk.Case, 200)
	for i := range cases {
		cases[i] = &sdk.Case{ID: strings.Repeat("x", i+1)}
	}
	for i, o := range batchrun.Score(context.Background(), s, cases, 0) {
		if o.Err != nil || o.Result.Score != 0.25 {
			t.Fatalf("Score()[%d] = %+v, want score 0.25", i, o)
		}
	}
	if p := s.peak.Load(); p < 1 || p > 64 {
		t.Errorf("peak concurrency = %d, want between 1 and 64", p)
	}
}

func TestDescribeFillsSDKFields(t *testing.T) {
	t.Parallel()
	d := batchrun.Describe(byLabel{})
	if d.SDKVersion != sdk.SDKVersion || !cmp.Equal(d.Protocols, []int{scorerpb.ProtocolVersion}) {
		t.Errorf("Describe() = %+v, want sdk_version %s and protocols [1]", d, sdk.SDKVersion)
	}
}
