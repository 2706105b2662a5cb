package governance

import (
	"math"
	"testing"
)

// TestOverrideRateThreshold covers item 2: the threshold at 19.9% and 20%,
// and 4 versus 5 reviews.
func TestOverrideRateThreshold(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		reviews, overrides int
		th                 Thresholds
		want               string
	}{
		"19.9 percent is ok":          {1000, 199, DefaultThresholds(), StatusOK},
		"20 percent is suspect":       {1000, 200, DefaultThresholds(), StatusSuspect},
		"one of five is suspect":      {5, 1, DefaultThresholds(), StatusSuspect},
		"four reviews are too few":    {4, 4, DefaultThresholds(), StatusUnreviewed},
		"five reviews judge":          {5, 4, DefaultThresholds(), StatusSuspect},
		"none":                        {0, 0, DefaultThresholds(), StatusUnreviewed},
		"no overrides":                {5, 0, DefaultThresholds(), StatusOK},
		"configured rate":             {10, 2, Thresholds{SuspectRate: 0.3, MinReviews: 5}, StatusOK},
		"configured min reviews":      {3, 1, Thresholds{SuspectRate: 0.2, MinReviews: 3}, StatusSuspect},
		"configured min reviews zero": {0, 0, Thresholds{SuspectRate: 0.2, MinReviews: 0}, StatusUnreviewed},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got, why := Status(tc.reviews, tc.overrides, tc.th); got != tc.want {
				t.Errorf("Status(%d, %d, %+v) = %s (%s), want %s", tc.reviews, tc.overrides, tc.th, got, why, tc.want)
			}
		})
	}
}

// TestWilsonInterval checks the Wilson 95% interval against values computed
// by hand from (p + z²/2n ± z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n), z = 1.96.
func TestWilsonInterval(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		k, n   int
		lo, hi float64
	}{
		"1 of 5":    {1, 5, 0.036224, 0.624465},
		"0 of 10":   {0, 10, 0, 0.277533},
		"5 of 10":   {5, 10, 0.236593, 0.763407},
		"10 of 10":  {10, 10, 0.722467, 1},
		"20 of 100": {20, 100, 0.133367, 0.288829},
		"no trials": {0, 0, 0, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := Wilson(tc.k, tc.n)
			if math.Abs(got[0]-tc.lo) > 1e-5 || math.Abs(got[1]-tc.hi) > 1e-5 {
				t.Errorf("Wilson(%d, %d) = %v, want [%v, %v]", tc.k, tc.n, got, tc.lo, tc.hi)
			}
		})
	}
}
