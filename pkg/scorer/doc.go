// Package scorer is the model shared by the host and the SDK: what a scorer
// declares about itself (Description), what it is asked to score (Case) and
// what it answers (Result). Plugin authors see these types through package
// sdk; the host uses them directly. Package scorerpb converts them to and from
// the wire.
package scorer
