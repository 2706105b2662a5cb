// Package excerpt bounds the text a scorer returns and the host stores as
// evidence: at most Max runes, a longer text cut on a rune boundary and
// ended with Marker so that the cut is never silent. The host refuses a
// check whose detail or evidence is longer (docs/plugins.md, "Contract
// checks on results"); sdk/grade bounds every text it records.
package excerpt
