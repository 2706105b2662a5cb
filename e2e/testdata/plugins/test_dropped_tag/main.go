// Command test_dropped_tag is a test plugin with the bug conformance must
// catch: a failed check carries the failure tag its KPI declares, but the
// tag is never copied into Result.FailureTags, the only tags the host reads.
package main

import (
	"context"
	"strings"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/plugin"
)

type dropped struct{}

func (dropped) Describe() sdk.Description {
	return sdk.Description{ID: "test_dropped_tag", Version: "0.0.1",
		KPIs:  []sdk.KPI{{Key: "cites_ticket", ValueType: sdk.Bool, FailureTag: "ungrounded_answer"}},
		Needs: []sdk.Need{sdk.NeedAnswer}}
}

func (dropped) Score(ctx context.Context, c *sdk.Case) (*sdk.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.Task.KPIs) == 0 {
		return &sdk.Result{Diagnostics: []string{"nothing to check"}}, nil
	}
	if strings.Contains(c.Turn.Answer, "TICKET-") {
		return &sdk.Result{Score: 1, Checks: []sdk.Check{{KPI: "cites_ticket", Score: 1, Passed: true, Detail: "cites a ticket"}}}, nil
	}
	return &sdk.Result{Score: 0, Checks: []sdk.Check{{KPI: "cites_ticket", Detail: "cites no ticket", FailureTag: "ungrounded_answer"}}}, nil
}

func main() { plugin.Serve(dropped{}) }
