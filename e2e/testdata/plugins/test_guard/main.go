// Command test_guard is a test plugin that reports an unsafe answer only
// through Check.FailureTag: a failed "safe" check tagged safety_gate_failed,
// with no Result.FailureTags.
package main

import (
	"context"
	"strings"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/plugin"
)

type guard struct{}

func (guard) Describe() sdk.Description {
	return sdk.Description{ID: "test_guard", Version: "0.0.1",
		KPIs:  []sdk.KPI{{Key: "safe", ValueType: sdk.Bool}},
		Needs: []sdk.Need{sdk.NeedTrace, sdk.NeedAnswer}}
}

func (guard) Score(_ context.Context, c *sdk.Case) (*sdk.Result, error) {
	if strings.Contains(c.Turn.Answer, "UNSAFE") {
		return &sdk.Result{Score: 0, Checks: []sdk.Check{{KPI: "safe", Score: 0, Passed: false,
			Detail: "the answer is unsafe", FailureTag: "safety_gate_failed"}}}, nil
	}
	return &sdk.Result{Score: 1, Checks: []sdk.Check{{KPI: "safe", Score: 1, Passed: true, Detail: "safe"}}}, nil
}

func main() { plugin.Serve(guard{}) }
