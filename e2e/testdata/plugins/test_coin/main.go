// Command test_coin is a nondeterministic test plugin: its "heads" check
// passes on every other call, whatever the case, so scoring the same turn
// twice gives two results (assay scorers probe must flag it).
package main

import (
	"context"
	"sync/atomic"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/plugin"
)

type coin struct{ flips *atomic.Int64 }

func (coin) Describe() sdk.Description {
	return sdk.Description{ID: "test_coin", Version: "0.0.1",
		KPIs:  []sdk.KPI{{Key: "heads", ValueType: sdk.Bool}},
		Needs: []sdk.Need{sdk.NeedTrace}}
}

func (c coin) Score(_ context.Context, _ *sdk.Case) (*sdk.Result, error) {
	if c.flips.Add(1)%2 == 0 {
		return &sdk.Result{Score: 0, Checks: []sdk.Check{{KPI: "heads", Score: 0, Passed: false, Detail: "tails"}}}, nil
	}
	return &sdk.Result{Score: 1, Checks: []sdk.Check{{KPI: "heads", Score: 1, Passed: true, Detail: "heads"}}}, nil
}

func main() { plugin.Serve(coin{flips: &atomic.Int64{}}) }
