// Package conformance checks a scorer as the host will use it, as a plain
// library that returns findings (it does not import package testing, so
// `assay plugins conformance` links it into the production binary): a valid
// description, every score in [0,1], checks that name only declared KPI
// keys, deterministic results, a cancelled context honoured and concurrent
// calls safe. CheckScorer serves a scorer in-process over real gRPC
// (go-plugin's test mode); CheckBinary launches a built plugin binary.
// Package sdktest wraps both for a Go test.
package conformance
