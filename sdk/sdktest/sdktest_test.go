package sdktest_test

import (
	"context"
	"testing"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/sdktest"
)

// fixed scores every case that sets its KPI 1 with one passing check of its one KPI.
type fixed struct{}

func (fixed) Describe() sdk.Description {
	return sdk.Description{ID: "fixed", Version: "0.1.0", KPIs: []sdk.KPI{{Key: "tools", ValueType: sdk.StringList}}}
}

func (fixed) Score(ctx context.Context, c *sdk.Case) (*sdk.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.Task.KPIs) == 0 {
		return &sdk.Result{Diagnostics: []string{"nothing to check"}}, nil
	}
	return &sdk.Result{Score: 1, Checks: []sdk.Check{{KPI: "tools", Score: 1, Passed: true}}}, nil
}

func TestRun(t *testing.T) {
	sdktest.Run(t, fixed{})
}
