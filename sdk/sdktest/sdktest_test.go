package sdktest_test

import (
	"context"
	"testing"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/sdktest"
)

// fixed scores every case 1 with one passing check of its one KPI.
type fixed struct{}

func (fixed) Describe() sdk.Description {
	return sdk.Description{ID: "fixed", Version: "0.1.0", KPIs: []sdk.KPI{{Key: "tools", ValueType: sdk.StringList}}}
}

func (fixed) Score(context.Context, *sdk.Case) (*sdk.Result, error) {
	return &sdk.Result{Score: 1, Checks: []sdk.Check{{KPI: "tools", Score: 1, Passed: true}}}, nil
}

func TestRun(t *testing.T) {
	sdktest.Run(t, fixed{})
}
