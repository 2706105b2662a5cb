// Command test_blend is a test plugin, not named composite, that declares
// the upstream need: its score is the mean of the upstream scores it
// receives, and its one check names the upstream scorers.
package main

import (
	"context"
	"sort"
	"strings"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/plugin"
)

type blend struct{}

func (blend) Describe() sdk.Description {
	return sdk.Description{ID: "test_blend", Version: "0.0.1",
		KPIs:  []sdk.KPI{{Key: "upstream_seen", ValueType: sdk.Bool}},
		Needs: []sdk.Need{sdk.NeedUpstream}}
}

func (blend) Score(_ context.Context, c *sdk.Case) (*sdk.Result, error) {
	var ids []string
	var sum float64
	for _, u := range c.Upstream {
		ids = append(ids, string(u.Scorer))
		sum += u.Result.Score
	}
	sort.Strings(ids)
	r := &sdk.Result{Checks: []sdk.Check{{KPI: "upstream_seen", Passed: len(ids) > 0,
		Detail: "upstream: " + strings.Join(ids, ",")}}}
	if len(ids) > 0 {
		r.Score = sum / float64(len(ids))
		r.Checks[0].Score = 1
	}
	return r, nil
}

func main() { plugin.Serve(blend{}) }
