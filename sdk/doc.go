// Package sdk is the model a scorer plugin author writes against: a Scorer
// (two methods, Describe and Score), what it declares (Description, KPI,
// Need), what it is asked to score (Case: the task, the turn as the trace
// tells it, the Company OS snapshots) and what it answers (Result, Check).
// It has no dependency beyond the standard library.
//
// Serving the scorer is package sdk/plugin's job, a main of one line:
//
//	func main() { plugin.Serve(myScorer{}) }
//
// Package sdk/grade is the grading kit (typed KPI values, averaging, failure
// tags gathered from failed checks), package sdk/sdktest runs the
// conformance checks in a test. The SDK is its own Go module,
// github.com/assay-eval/assay/sdk (docs/plugins.md, "Writing a plugin").
package sdk
