// Package kpi compiles and evaluates the CEL KPI checks of an eval pack
// (docs/cel.md).
//
// One base CEL environment is built per process: the variables turn, task,
// state, before and scorer with declared (native Go struct) types, the
// strings, lists, math, sets, bindings, two-variable comprehension and
// optional-types libraries at pinned versions, and the assay helpers
// (in_order, keywords_ratio, sum, mean, count_tool). A Checker plugs into the
// pack loader as a pack.Check: it compiles, type-checks and cost-estimates
// every check when the pack loads and reports problems at the YAML line:col
// of the offending token. The resulting Set evaluates a task's checks
// against one turn with a cost limit per evaluation and a budget per turn; a
// check that errors scores 0 and never aborts the turn. When every input of a
// turn is within the sizes the load-time estimate assumed (fit.go), the
// estimate already bounds the cost and checks run without per-operation cost
// tracking; otherwise they run tracked and are interrupted at the limit.
package kpi
