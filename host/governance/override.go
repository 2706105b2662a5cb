package governance

import (
	"fmt"
	"math"

	"github.com/assay-eval/assay/host/pack"
)

// Scorer review statuses (docs/governance.md).
const (
	StatusOK         = "ok"
	StatusSuspect    = "suspect"
	StatusUnreviewed = "unreviewed"
)

// Thresholds decide when a scorer is suspect: an override rate of at least
// SuspectRate over at least MinReviews reviews.
type Thresholds struct {
	SuspectRate float64
	MinReviews  int
}

// DefaultThresholds are the thresholds of a pack without a governance block.
func DefaultThresholds() Thresholds {
	return Thresholds{SuspectRate: pack.DefaultSuspectRate, MinReviews: pack.DefaultMinReviews}
}

// z95 is the standard normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Wilson is the Wilson score 95% interval of k successes in n trials;
// [0, 1] when n is 0.
func Wilson(k, n int) [2]float64 {
	if n <= 0 {
		return [2]float64{0, 1}
	}
	p, nf, z2 := float64(k)/float64(n), float64(n), z95*z95
	center := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / (1 + z2/nf)
	return [2]float64{math.Max(0, center-half), math.Min(1, center+half)}
}

// rateEpsilon absorbs the rounding of overrides/reviews, so that 1/5 is at
// 0.20 and not a hair under it.
const rateEpsilon = 1e-12

// Status is a scorer's review status from its reviews and overrides, and
// why: unreviewed below t.MinReviews reviews (too few to judge), suspect
// at an override rate of t.SuspectRate or more, ok otherwise.
func Status(reviews, overrides int, t Thresholds) (string, string) {
	if reviews < t.MinReviews || reviews == 0 {
		return StatusUnreviewed, fmt.Sprintf("%d of the %d reviews needed to judge", reviews, max(t.MinReviews, 1))
	}
	rate := float64(overrides) / float64(reviews)
	if rate+rateEpsilon >= t.SuspectRate {
		return StatusSuspect, fmt.Sprintf("override rate %.3f (%d of %d reviews) is at least %.3f", rate, overrides, reviews, t.SuspectRate)
	}
	return StatusOK, fmt.Sprintf("override rate %.3f (%d of %d reviews) is under %.3f", rate, overrides, reviews, t.SuspectRate)
}
