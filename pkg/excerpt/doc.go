// Package excerpt bounds text that assay stores or shows as evidence: at
// most Max runes, a longer text cut on a rune boundary and ended with
// Marker so that the cut is never silent.
package excerpt
