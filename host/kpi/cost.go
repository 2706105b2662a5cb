package kpi

import (
	"strings"

	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"
)

// Limits bound what a pack's CEL may cost. Costs are in CEL cost units
// (roughly one unit per operation or per ten characters scanned).
type Limits struct {
	// Estimate is the highest estimated worst-case cost an expression may
	// have at load; above it the expression is refused (kpi.cost).
	Estimate uint64 `json:"estimate"`
	// Eval is the cost limit of one evaluation at run time; evaluation is
	// interrupted when it is reached.
	Eval uint64 `json:"eval"`
	// Turn is the budget of all of a task's checks (and message_exprs) on
	// one turn; once spent, the remaining checks error.
	Turn uint64 `json:"turn"`
}

// DefaultLimits are the limits NewChecker uses.
var DefaultLimits = Limits{Estimate: 5_000_000, Eval: 5_000_000, Turn: 20_000_000}

// interruptEvery is how many comprehension iterations run between checks for
// cancellation of the evaluation's context.
const interruptEvery = 100

// sizes bounds the size of each input the cost estimate sees, by field path
// (list items are "@items", map values "@values"). They are the largest
// inputs an estimate is sound for; a larger input is still bounded at run
// time by Limits.Eval.
var sizes = map[string]uint64{
	"turn.events":                       2000,
	"turn.tool_calls":                   200,
	"turn.tools":                        200,
	"turn.phases":                       200,
	"turn.error_messages":               50,
	"turn.answer":                       20000,
	"turn.streamed_text":                20000,
	"turn.tool_calls.@items.args":       32,
	"task.tags":                         32,
	"task.kpis":                         32,
	"scorer.checks":                     32,
	"state.tasks":                       200,
	"state.memory":                      500,
	"state.tasks.@items.context_notes":  20,
	"state.tasks.@items.specification":  4000,
	"state.memory.@items.body":          4000,
	"state.memory.@items.tags":          32,
	"before.tasks":                      200,
	"before.memory":                     500,
	"before.tasks.@items.context_notes": 20,
	"before.tasks.@items.specification": 4000,
	"before.memory.@items.body":         4000,
	"before.memory.@items.tags":         32,
}

// Defaults for inputs the table does not name. A dyn value (a KPI value, a
// tool argument) is bounded like a string.
const (
	defaultStringSize = 1024
	defaultListSize   = 64
	defaultMapSize    = 32
)

// sizeEstimator tells the CEL cost estimator how large the variables can be.
type sizeEstimator struct{}

func (sizeEstimator) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	path := n.Path()
	if len(path) == 0 {
		return nil
	}
	if s, ok := sizes[strings.Join(path, ".")]; ok {
		return &cost.SizeEstimate{Min: 0, Max: s}
	}
	t := n.Type()
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case types.StringKind, types.BytesKind, types.DynKind:
		return &cost.SizeEstimate{Min: 0, Max: defaultStringSize}
	case types.ListKind:
		return &cost.SizeEstimate{Min: 0, Max: defaultListSize}
	case types.MapKind:
		return &cost.SizeEstimate{Min: 0, Max: defaultMapSize}
	}
	return nil
}

func (sizeEstimator) EstimateCallCost(function, overloadID string, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	return nil
}
