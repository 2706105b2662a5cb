// Package sdktest is the conformance kit for assay scorers in a Go test:
// Run(t, s) runs package conformance's checks against a scorer served
// in-process over real gRPC, each check as a subtest (run the test with
// -race so the concurrency check means something); RunBinary does the same
// for a built plugin binary. The checks themselves live in package
// conformance, which does not import testing.
package sdktest
