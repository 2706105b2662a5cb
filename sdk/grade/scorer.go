package grade

import (
	"context"

	"github.com/assay-eval/assay/sdk"
)

// scorer is an sdk.Scorer that records each case's checks on a fresh Sheet.
type scorer struct {
	describe func() sdk.Description
	check    func(s *Sheet, c *sdk.Case)
}

var _ sdk.Scorer = scorer{}

// NewScorer returns the scorer described by describe, which builds the
// description afresh for every caller, whose check records the checks of one
// case on its sheet.
func NewScorer(describe func() sdk.Description, check func(s *Sheet, c *sdk.Case)) sdk.Scorer {
	return scorer{describe: describe, check: check}
}

// Describe implements sdk.Scorer.
func (g scorer) Describe() sdk.Description { return g.describe() }

// Score implements sdk.Scorer.
func (g scorer) Score(ctx context.Context, c *sdk.Case) (*sdk.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := NewSheet(g.describe(), &c.Task)
	g.check(s, c)
	return s.Result(), nil
}
