// Package verify is the verification pipeline: it reads a harness run (a
// candidate directory or a turns file), parses each trace as it is needed,
// scores the turns in batches on the plugin host (a scorer that declares the
// upstream need after its upstream scorers), evaluates the pack's CEL checks
// in the host, turns the results into scores and failure tags, and records
// each turn with the key of its inputs as it completes, so a rerun reuses
// exactly the turns whose inputs did not change (docs/verify-engine.md).
//
// Run is the one entry point for a whole verification (docs/verify.md): it
// verifies every candidate of a Request, compares them with a baseline,
// gives each its verdict, records the run summaries, computes the Pareto
// frontier and returns the Report that is summary.json. `assay verify` only
// parses flags, calls Run and prints.
package verify
