package kpi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/pkg/trace"
)

// Run-time errors a check can end with besides CEL's own (division by
// zero, no such key, index out of range, cost limit exceeded).
var (
	ErrBudget     = errors.New("turn CEL budget exhausted")
	ErrOutOfRange = errors.New("check value outside [0,1]")
	ErrNotScored  = errors.New("check result is not bool or double")
)

// Input is what one turn's checks are evaluated against.
type Input struct {
	Turn          *trace.Turn
	Label         string
	Persona       string
	LatencyS      *float64
	CostUSD       *float64
	State, Before *companyos.Snapshot // nil: an empty snapshot
	ScorerScore   float64
	ScorerChecks  map[string]float64
}

// Result is the outcome of one CEL check on one turn.
//
// A bool check scores 1 or 0 and passes on true. A double check scores its
// value (partial credit) and passes when the value is at least PassDouble.
// A check that errors at run time scores 0, does not pass, carries the error
// in Err and Detail, and has no FailureTag (an error says nothing about the
// agent). A check that fails has Detail = its message, or the evaluated
// message_expr, and FailureTag = its failure_tag.
type Result struct {
	Name       string
	Score      float64
	Passed     bool
	Weight     float64
	Detail     string
	FailureTag string
	Cost       uint64 // cost charged to the turn's budget (see Expr.Eval), message_expr included
	Err        error
}

// PassDouble is the lowest double value that counts as passing.
const PassDouble = 0.5

// check is one compiled pack check.
type check struct {
	def    *pack.CELCheck
	expr   *Expr
	msg    *Expr // nil without message_expr
	isBool bool
}

// Set holds the compiled checks of one pack, by task label.
type Set struct {
	limits Limits
	// The checks of the pack's task i (tasks[i]) are lists[at[i]], and it
	// has none when at[i] is -1: tasks whose checks are alike share a
	// list, and a task costs an index rather than a slice or a map entry
	// of its own (docs/performance.md, "Verifying many small turns").
	tasks []*pack.Task // the pack's Tasks, as CheckPack was given them
	at    []int32
	lists [][]*check
	fits  *fitCache // which snapshots fit the estimate's sizes
}

// Len is the number of compiled checks of the task with the given label.
// A nil Set has none.
func (s *Set) Len(label string) int {
	if s == nil {
		return 0
	}
	return len(s.checksAt(slices.IndexFunc(s.tasks, func(t *pack.Task) bool { return t.Label == label })))
}

// Evaluate runs every CEL check of task against one turn, in pack order.
// It never fails as a whole: a check that errors scores 0 with the error as
// its detail, and once the turn's budget is spent the remaining checks error
// with ErrBudget. A nil Set, or a task without checks, returns nil.
func (s *Set) Evaluate(ctx context.Context, task *pack.Task, in Input) []Result {
	checks := s.checksOf(task)
	if len(checks) == 0 {
		return nil
	}
	act, err := newActivation(task, in, s.fits)
	results := make([]Result, 0, len(checks))
	var spent uint64
	for _, ch := range checks {
		r := Result{Name: ch.def.Name, Weight: ch.def.Weight}
		switch {
		case err != nil:
			r.Err = err
		case spent >= s.limits.Turn:
			r.Err = ErrBudget
		default:
			r = ch.run(ctx, act, r)
			spent += r.Cost
		}
		if r.Err != nil {
			r.Score, r.Passed, r.FailureTag = 0, false, ""
			r.Detail = r.Err.Error()
		}
		results = append(results, r)
	}
	return results
}

func (ch *check) run(ctx context.Context, act *Activation, r Result) Result {
	v, c, err := ch.expr.Eval(ctx, act)
	r.Cost = c
	if err != nil {
		r.Err = err
		return r
	}
	switch x := v.(type) {
	case types.Bool:
		r.Passed = bool(x)
		if r.Passed {
			r.Score = 1
		}
	case types.Double:
		f := float64(x)
		if math.IsNaN(f) || f < 0 || f > 1 {
			r.Err = fmt.Errorf("%w: %v", ErrOutOfRange, f)
			return r
		}
		r.Score, r.Passed = f, f >= PassDouble
	default:
		r.Err = fmt.Errorf("%w: got %s", ErrNotScored, v.Type().TypeName())
		return r
	}
	if r.Passed {
		return r
	}
	r.FailureTag = ch.def.FailureTag
	r.Detail = ch.def.Message
	if ch.msg != nil {
		mv, mc, merr := ch.msg.Eval(ctx, act)
		r.Cost += mc
		if s, ok := mv.(types.String); ok && merr == nil {
			r.Detail = string(s)
		} else if merr != nil {
			r.Detail = joinDetail(r.Detail, "message_expr: "+merr.Error())
		}
	}
	if r.Detail == "" {
		if ch.isBool {
			r.Detail = "check was false"
		} else {
			r.Detail = fmt.Sprintf("check scored %.3g", r.Score)
		}
	}
	return r
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + " (" + b + ")"
}

// Eval evaluates the expression against act and returns its value and its
// cost. When the turn fits the sizes the load-time estimate assumed and the
// estimate is within the run-time limit, the estimate bounds the cost, so
// the evaluation runs untracked (about three times faster) and the returned
// cost is the estimate's upper bound. Otherwise the evaluation is tracked,
// interrupted at the run-time limit, and the cost returned is the actual
// one. Either way it is interrupted when ctx is done.
func (e *Expr) Eval(ctx context.Context, act *Activation) (ref.Val, uint64, error) {
	if e.fast != nil && act.fits {
		v, _, err := evalProgram(ctx, e.fast, act)
		if err != nil {
			return nil, e.Estimate.Max, fmt.Errorf("evaluating: %w", err)
		}
		return v, e.Estimate.Max, nil
	}
	return e.EvalActual(ctx, act)
}

// EvalActual evaluates with cost tracking and returns the actual cost. On a
// turn that fits the estimate's sizes (Activation.Fits), an evaluation that
// completes costs between e.Estimate.Min and e.Estimate.Max.
func (e *Expr) EvalActual(ctx context.Context, act *Activation) (ref.Val, uint64, error) {
	p, err := e.trackedProgram()
	if err != nil {
		return nil, 0, err
	}
	v, det, err := evalProgram(ctx, p, act)
	var c uint64
	if det != nil {
		if p := det.ActualCost(); p != nil {
			c = *p
		}
	}
	if err != nil {
		return nil, c, fmt.Errorf("evaluating: %w", err)
	}
	return v, c, nil
}

func evalProgram(ctx context.Context, p cel.Program, act *Activation) (ref.Val, *cel.EvalDetails, error) {
	if ctx.Done() == nil {
		return p.Eval(act)
	}
	return p.ContextEval(ctx, act)
}

// Activation holds the variables of one turn, each converted once, when an
// expression first reads it, and shared by every check evaluated on the
// turn. It is not safe for concurrent use.
type Activation struct {
	adapter types.Adapter
	turn    *Turn
	task    *Task
	state   *companyos.Snapshot
	before  *companyos.Snapshot
	scorer  *Scorer
	vals    [5]ref.Val // turn, task, state, before and scorer converted, when read
	fits    bool       // every input within the estimate's size bounds
}

var _ interpreter.Activation = (*Activation)(nil)

// Fits reports whether every input is within the sizes the load-time
// estimate assumed: then an expression's estimate bounds its actual cost on
// this turn.
func (a *Activation) Fits() bool { return a.fits }

// ResolveName implements interpreter.Activation.
func (a *Activation) ResolveName(name string) (any, bool) {
	var i int
	var native any
	switch name {
	case varTurn:
		i, native = 0, a.turn
	case varTask:
		i, native = 1, a.task
	case varState:
		i, native = 2, a.state
	case varBefore:
		i, native = 3, a.before
	case varScorer:
		i, native = 4, a.scorer
	default:
		return nil, false
	}
	if a.vals[i] == nil {
		a.vals[i] = a.adapter.NativeToValue(native)
	}
	return a.vals[i], true
}

// Parent implements interpreter.Activation.
func (a *Activation) Parent() interpreter.Activation { return nil }

// NewActivation converts a turn and its task into CEL variables. task may be
// nil (task is then empty).
func NewActivation(task *pack.Task, in Input) (*Activation, error) {
	return newActivation(task, in, nil)
}

// newActivation is NewActivation with the snapshot sizes cached in fits
// (nil: not cached).
func newActivation(task *pack.Task, in Input, fits *fitCache) (*Activation, error) {
	env, err := Env()
	if err != nil {
		return nil, err
	}
	adapter := env.CELTypeAdapter()
	t := &Turn{Label: in.Label, Persona: in.Persona}
	if in.Turn != nil {
		tr := in.Turn
		t.Answer, t.StreamedText, t.TextLen = tr.Answer, tr.StreamedText, tr.TextLen
		t.Finalized, t.Error, t.ErrorMessages = tr.Finalized, tr.Error, tr.ErrorMessages
		t.ToolCalls, t.Phases, t.Events = tr.ToolCalls, tr.Phases, tr.Events
		t.ToolEvents, t.LoopIters, t.SubAgents = tr.ToolEvents, tr.LoopIters, tr.SubAgents
		t.TaskID, t.TaskAction = tr.TaskID, tr.TaskAction
		t.Tools = make([]string, len(tr.ToolCalls))
		for i := range tr.ToolCalls {
			t.Tools[i] = tr.ToolCalls[i].Name
		}
	}
	if in.LatencyS != nil {
		t.LatencyS, t.LatencyKnown = *in.LatencyS, true
	}
	if in.CostUSD != nil {
		t.CostUSD, t.CostKnown = *in.CostUSD, true
	}
	var k *Task
	if task == nil {
		k = &Task{Label: in.Label, Persona: in.Persona}
	} else {
		k = &Task{Label: task.Label, Persona: task.Persona, Scorer: string(task.Scorer),
			Weight: task.Weight, Tags: task.SliceTags, KPIs: task.KPIs}
		if t.Label == "" {
			t.Label = task.Label
		}
		if t.Persona == "" {
			t.Persona = task.Persona
		}
	}
	state, before := in.State, in.Before
	if state == nil {
		state = &companyos.Snapshot{}
	}
	if before == nil {
		before = &companyos.Snapshot{}
	}
	sc := &Scorer{Score: in.ScorerScore, Checks: in.ScorerChecks}
	return &Activation{adapter: adapter, turn: t, task: k, state: state, before: before, scorer: sc,
		fits: fitsEstimate(t, k, sc, state, before, fits)}, nil
}
