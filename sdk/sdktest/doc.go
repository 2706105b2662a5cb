// Package sdktest is the conformance kit for assay scorers. Run(t, s) serves
// a scorer in-process over real gRPC (go-plugin's test mode) and checks it as
// the host will use it: a valid description, every score in [0,1], checks
// that name only declared KPI keys, deterministic results, a cancelled
// context honoured and concurrent calls safe (run the test with -race).
// CheckBinary runs the same checks against a built plugin binary and
// returns a Report, for `assay plugins conformance`.
package sdktest
