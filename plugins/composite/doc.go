// Package composite is the built-in composite scorer: the mean of the scores
// the upstream scorers gave the same case. The host decides which scorers run
// upstream (every scorer that declares one of the task's KPI keys and does
// not itself need upstream results; docs/verify-engine.md);
// composite only combines their results: their checks in order, the union of
// their failure tags and their diagnostics, each prefixed with the scorer id.
// It declares no KPI keys of its own.
package composite
