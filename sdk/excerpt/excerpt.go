package excerpt

import "unicode/utf8"

// Bounds of a stored excerpt.
const (
	Max    = 500             // runes in an excerpt, marker included
	Marker = "… [truncated]" // ends a cut excerpt (13 runes, starting with U+2026)
)

// Bound bounds s for storage. A string of more than Max runes becomes its
// first 487 runes followed by Marker, exactly Max runes, and truncated is
// true; a shorter one is returned unchanged.
//
// Lengths are counted in runes (Unicode code points), so text outside the
// Basic Multilingual Plane counts once per character; a rune is never split.
func Bound(s string) (excerpt string, truncated bool) {
	if utf8.RuneCountInString(s) <= Max {
		return s, false
	}
	return Cut(s, Max-utf8.RuneCountInString(Marker)) + Marker, true
}

// Cut returns the first n runes of s (all of s when it is shorter), without
// a marker.
func Cut(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
