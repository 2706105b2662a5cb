package excerpt

import sdkexcerpt "github.com/assay-eval/assay/sdk/excerpt"

// The bound is the protocol's (sdk/excerpt): the host stores excerpts under
// the same limit a scorer's texts must keep.
const (
	Max    = sdkexcerpt.Max
	Marker = sdkexcerpt.Marker
)

// Bound bounds s for storage (sdk/excerpt.Bound).
func Bound(s string) (excerpt string, truncated bool) { return sdkexcerpt.Bound(s) }

// Cut returns the first n runes of s (sdk/excerpt.Cut).
func Cut(s string, n int) string { return sdkexcerpt.Cut(s, n) }
