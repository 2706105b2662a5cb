// Package scorer gives the host short names for the model it shares with
// scorer plugins: what a scorer declares about itself (Description), what it
// is asked to score (Case) and what it answers (Result). The types are
// package sdk's, defined and documented in the SDK module; package
// sdk/scorerpb converts them to and from the wire.
package scorer
