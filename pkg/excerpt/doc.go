// Package excerpt bounds text that assay stores or shows as evidence: at
// most Max runes, a longer text cut on a rune boundary and ended with
// Marker so that the cut is never silent. Escape and EscapeLine make text
// from an input safe to print on a terminal (docs/cli.md).
package excerpt
