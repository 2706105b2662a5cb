// Package batchrun is the protocol-level batch runner both sides of the
// plugin boundary share: Score scores a batch of cases with a scorer
// (bounded concurrency, each panic recovered into its case, each result
// checked, context cancellation honoured) and returns one Outcome per case.
// A plugin runs it behind plugin.Serve (sdk/plugin); the host runs it for scorers served
// in-process. Describe fills in the fields the SDK reports about itself.
// The host imports this package, never the author-facing sdk.
package batchrun
