package composite

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/grade"
)

// description is built fresh for every caller, so nobody can change another's.
func description() sdk.Description {
	return sdk.Description{
		ID:      "composite",
		Version: "1.0.0",
		KPIs:    []sdk.KPI{},
		Needs:   []sdk.Need{sdk.NeedUpstream},
	}
}

// scorer is the composite scorer.
type scorer struct{}

var _ sdk.Scorer = scorer{}

// New returns the composite scorer.
func New() sdk.Scorer { return scorer{} }

// Describe implements sdk.Scorer.
func (scorer) Describe() sdk.Description { return description() }

// Score implements sdk.Scorer.
func (scorer) Score(ctx context.Context, c *sdk.Case) (*sdk.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &sdk.Result{Checks: []sdk.Check{}}
	if len(c.Upstream) == 0 {
		r.Diagnostics = []string{fmt.Sprintf(
			"no upstream results: no other scorer declares a KPI key of task %q, so there is nothing to combine", c.Task.Label)}
		return r, nil
	}
	var sum float64
	for _, up := range c.Upstream {
		score := up.Result.Score
		if math.IsNaN(score) || score < 0 || score > 1 {
			r.Diagnostics = append(r.Diagnostics, fmt.Sprintf("%s: score %v is outside [0,1]; counted as %v", up.Scorer, score, grade.Clamp(score)))
			score = grade.Clamp(score)
		}
		sum += score
		r.Checks = append(r.Checks, up.Result.Checks...)
		r.FailureTags = append(r.FailureTags, up.Result.FailureTags...)
		for _, d := range up.Result.Diagnostics {
			r.Diagnostics = append(r.Diagnostics, fmt.Sprintf("%s: %s", up.Scorer, d))
		}
	}
	r.Score = sum / float64(len(c.Upstream))
	slices.Sort(r.FailureTags)
	r.FailureTags = slices.Compact(r.FailureTags)
	return r, nil
}
