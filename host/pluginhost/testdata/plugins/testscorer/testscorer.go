// Package testscorer is the scorer the test-only plugins share: it echoes
// the task label in its one check, and calls a hook first so each plugin can
// misbehave in its own way.
package testscorer

import (
	"context"

	"github.com/assay-eval/assay/sdk"
)

// Scorer is a test scorer.
type Scorer struct {
	ID    sdk.ID
	Hook  func(ctx context.Context, c *sdk.Case) *sdk.Result // a non-nil result replaces the default
	Needs []sdk.Need                                         // nil: trace only
}

// Describe implements sdk.Scorer.
func (s Scorer) Describe() sdk.Description {
	needs := s.Needs
	if needs == nil {
		needs = []sdk.Need{sdk.NeedTrace}
	}
	return sdk.Description{
		ID: s.ID, Version: "0.0.1",
		KPIs:  []sdk.KPI{{Key: "label_seen", ValueType: sdk.Bool}},
		Needs: needs,
	}
}

// Score implements sdk.Scorer.
func (s Scorer) Score(ctx context.Context, c *sdk.Case) (*sdk.Result, error) {
	if s.Hook != nil {
		if r := s.Hook(ctx, c); r != nil {
			return r, nil
		}
	}
	return &sdk.Result{Score: 0.5, Checks: []sdk.Check{{KPI: "label_seen", Score: 1, Passed: true, Detail: c.Task.Label}}}, nil
}
