package kpi

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/interpreter"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/pkg/diag"
)

// Diagnostic codes.
const (
	CodeCompile = "kpi.compile" // syntax error, unknown variable, field or function
	CodeType    = "kpi.type"    // a check that is not bool or double, a message_expr that is not string
	CodeCost    = "kpi.cost"    // estimated cost over Limits.Estimate
)

// PosFunc maps a code-point offset inside an expression's text to the file
// position of that character (pack.ScalarPos.At for a pack scalar).
type PosFunc func(offset int) diag.Pos

// TextPos maps offsets inside text, a standalone expression, to
// file:line:col positions within it (1-based, counting code points).
func TextPos(file, text string) PosFunc {
	return func(offset int) diag.Pos {
		line, col, i := 1, 1, 0
		for _, r := range text {
			if i == offset {
				break
			}
			if r == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
			i++
		}
		return diag.Pos{File: file, Line: line, Col: col}
	}
}

// Expr is one compiled, type-checked and cost-estimated expression.
type Expr struct {
	Source   string
	Type     *cel.Type     // the result type
	Estimate cost.Estimate // the load-time cost estimate
	checked  *cel.Ast
	limit    uint64 // Limits.Eval

	// fast runs without cost tracking; set when the estimate is within the
	// limit, and used only for turns that fit the estimate's size bounds.
	fast cel.Program
	// tracked has the run-time cost limit; planned on first use.
	trackedOnce sync.Once
	tracked     cel.Program
	trackedErr  error
}

// trackedProgram plans (once) the program with the run-time cost limit.
func (e *Expr) trackedProgram() (cel.Program, error) {
	e.trackedOnce.Do(func() {
		env, err := Env()
		if err != nil {
			e.trackedErr = err
			return
		}
		// Not cel.OptOptimize: it folds constant lists, maps and
		// conversions when the program is planned, so their cost, which the
		// estimate counts, would go uncharged and the actual cost could fall
		// below the estimate's minimum. Constant regular expressions are
		// still compiled at planning (a bad one is reported at load).
		e.tracked, e.trackedErr = env.Program(e.checked,
			cel.CostLimit(e.limit),
			cel.InterruptCheckFrequency(interruptEvery),
			cel.OptimizeRegex(interpreter.MatchesRegexOptimization))
		if e.trackedErr != nil {
			e.trackedErr = fmt.Errorf("planning the program: %w", e.trackedErr)
		}
	})
	return e.tracked, e.trackedErr
}

// TypeName is the result type as CEL spells it, e.g. "bool" or "list(string)".
func (e *Expr) TypeName() string { return cel.FormatCELType(e.Type) }

// Checker compiles a pack's CEL checks. It implements pack.Check; after a
// CheckPack without errors, Set returns the compiled checks.
type Checker struct {
	limits Limits

	mu  sync.Mutex
	set *Set
}

var _ pack.Check = (*Checker)(nil)

// Option configures a Checker.
type Option func(*Checker)

// WithLimits replaces DefaultLimits; a zero field keeps its default.
func WithLimits(l Limits) Option {
	return func(c *Checker) {
		if l.Estimate > 0 {
			c.limits.Estimate = l.Estimate
		}
		if l.Eval > 0 {
			c.limits.Eval = l.Eval
		}
		if l.Turn > 0 {
			c.limits.Turn = l.Turn
		}
	}
}

// NewChecker returns a Checker with DefaultLimits unless an option says otherwise.
func NewChecker(opts ...Option) *Checker {
	c := &Checker{limits: DefaultLimits}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Limits are the checker's cost limits.
func (c *Checker) Limits() Limits { return c.limits }

// Set returns the checks compiled by the last CheckPack, or nil when there
// was none or it found errors.
func (c *Checker) Set() *Set {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.set
}

// CheckPack compiles every task's CEL checks and message_exprs, reporting
// every problem at the YAML position of the offending token.
func (c *Checker) CheckPack(p *pack.Pack) diag.List {
	set := &Set{limits: c.limits, tasks: p.Tasks, at: make([]int32, len(p.Tasks)), fits: new(fitCache)}
	pc := c.newPackCheck(set)
	var all diag.List
	for i, t := range p.Tasks {
		all = append(all, pc.checkTask(i, t)...)
	}
	all = append(all, pc.CheckRest(p)...)
	all.Sort()
	c.mu.Lock()
	defer c.mu.Unlock()
	if all.HasErrors() {
		c.set = nil
	} else {
		c.set = set
	}
	return all
}

// CheckTasks checks a pack a task at a time, as CheckPack does, for
// pack.Validate; it keeps no compiled checks (Set is not changed).
func (c *Checker) CheckTasks() pack.TaskCheck { return c.newPackCheck(nil) }

var _ pack.TaskChecker = (*Checker)(nil)

// packCheck is one pack's checking: the programs compiled so far, and the
// checks by task label when set is not nil.
type packCheck struct {
	c     *Checker
	set   *Set
	cache map[string]*Expr

	// When the checks are kept: one compiled check for the checks defined
	// alike, one list for a task whose checks are the previous task's
	// (a check's positions are read only to report its problems, here).
	alike  map[pack.CELDef]*check
	prev   []*check
	prevAt int32 // prev's index in the set's lists
}

func (c *Checker) newPackCheck(set *Set) *packCheck {
	return &packCheck{c: c, set: set, cache: map[string]*Expr{}}
}

// compile compiles src once per pack: packs repeat checks across tasks, and
// an expression that compiled cleanly is compiled once (same text, same
// environment, same program). When the checks are not kept (set is nil),
// only the expression's text and type are: nothing else is read of it.
func (pc *packCheck) compile(src string, at PosFunc) (*Expr, diag.List) {
	if e, ok := pc.cache[src]; ok {
		return e, nil
	}
	e, ds := pc.c.Compile(src, at)
	if e != nil && len(ds) == 0 {
		if pc.set == nil {
			e = &Expr{Source: e.Source, Type: e.Type}
		}
		pc.cache[src] = e
	}
	return e, ds
}

// CheckTask compiles t's CEL checks and message_exprs.
func (pc *packCheck) CheckTask(t *pack.Task) diag.List { return pc.checkTask(-1, t) }

// checkTask is CheckTask of the pack's task i, whose compiled checks are
// kept when set is not nil.
func (pc *packCheck) checkTask(i int, t *pack.Task) diag.List {
	var all diag.List
	var kept []*check
	for _, cc := range t.CEL {
		ch, ds := pc.c.compileCheck(cc, pc.compile)
		all = append(all, ds...)
		if ch != nil && pc.set != nil {
			kept = append(kept, pc.shared(ch))
		}
	}
	if pc.set == nil || i < 0 {
		return all
	}
	pc.set.at[i] = -1
	if len(kept) > 0 {
		if !slices.Equal(kept, pc.prev) {
			pc.prev = slices.Clip(kept)
			pc.prevAt = int32(len(pc.set.lists))
			pc.set.lists = append(pc.set.lists, pc.prev)
		}
		pc.set.at[i] = pc.prevAt
	}
	return all
}

// checksOf is the compiled checks kept of task, nil when no checks are
// kept. A task of the pack is found by its Index; any other task (one
// made by hand, or a copy) by the pack's task it is, else the first of
// its label.
func (s *Set) checksOf(task *pack.Task) []*check {
	if s == nil {
		return nil
	}
	i := task.Index()
	if i >= len(s.tasks) || s.tasks[i] != task {
		if i = slices.Index(s.tasks, task); i < 0 {
			i = slices.IndexFunc(s.tasks, func(t *pack.Task) bool { return t.Label == task.Label })
		}
	}
	return s.checksAt(i)
}

// checksAt is the compiled checks kept of the pack's task i; nil for -1.
func (s *Set) checksAt(i int) []*check {
	if i < 0 || s.at[i] < 0 {
		return nil
	}
	return s.lists[s.at[i]]
}

// shared is the compiled check kept for ch's definition: the first one
// compiled for it (Evaluate reads its name, weight, message and failure
// tag, and its programs, which the compile cache already shares).
func (pc *packCheck) shared(ch *check) *check {
	k := ch.def.Def()
	if s, ok := pc.alike[k]; ok {
		return s
	}
	if pc.alike == nil {
		pc.alike = map[pack.CELDef]*check{}
	}
	pc.alike[k] = ch
	return ch
}

// CheckRest compiles the pack's kill criteria.
func (pc *packCheck) CheckRest(p *pack.Pack) diag.List {
	_, kds := CompileKillCriteria(p)
	return kds
}

func (c *Checker) compileCheck(cc *pack.CELCheck, compile func(string, PosFunc) (*Expr, diag.List)) (*check, diag.List) {
	var ds diag.List
	e, eds := compile(cc.Expr, cc.ExprPos.At)
	ds = append(ds, eds...)
	if e != nil && !isBool(e.Type) && !isDouble(e.Type) {
		ds = append(ds, diag.Errorf(cc.ExprPos.At(0), CodeType,
			"check %q has type %s; a check must be bool (pass/fail) or double (partial credit in [0,1])",
			cc.Name, e.TypeName()))
		e = nil
	}
	var msg *Expr
	if cc.MessageExpr != "" {
		var mds diag.List
		msg, mds = compile(cc.MessageExpr, cc.MessagePos.At)
		ds = append(ds, mds...)
		if msg != nil && !msg.Type.IsExactType(cel.StringType) {
			ds = append(ds, diag.Errorf(cc.MessagePos.At(0), CodeType,
				"message_expr of check %q has type %s; it must be string", cc.Name, msg.TypeName()))
			msg = nil
		}
	}
	if e == nil || (cc.MessageExpr != "" && msg == nil) {
		return nil, ds
	}
	return &check{def: cc, expr: e, msg: msg, isBool: isBool(e.Type)}, ds
}

func isBool(t *cel.Type) bool   { return t.IsExactType(cel.BoolType) }
func isDouble(t *cel.Type) bool { return t.IsExactType(cel.DoubleType) }

// Compile parses, type-checks and cost-estimates src in the base
// environment, whatever its result type. Problems are reported at at(offset)
// of the offending token.
func (c *Checker) Compile(src string, at PosFunc) (*Expr, diag.List) {
	env, err := Env()
	if err != nil {
		return nil, diag.List{diag.Errorf(at(0), CodeCompile, "%v", err)}
	}
	source := common.NewTextSource(src)
	parsed, iss := env.ParseSource(source)
	if iss.Err() != nil {
		// Later syntax errors are mostly the parser recovering from the first.
		return nil, issueDiags(source, iss, at)[:1]
	}
	checked, iss := env.Check(parsed)
	if iss.Err() != nil {
		return nil, issueDiags(source, iss, at)
	}
	est, err := env.EstimateCost(checked, sizeEstimator{})
	if err != nil {
		return nil, diag.List{diag.Errorf(at(0), CodeCost, "estimating the cost: %v", err)}
	}
	if est.Max > c.limits.Estimate {
		return nil, diag.List{diag.Errorf(at(0), CodeCost,
			"estimated cost %s exceeds the limit %d; avoid nesting comprehensions over large lists (turn.events, state.tasks)",
			formatEstimate(est), c.limits.Estimate)}
	}
	e := &Expr{Source: src, Type: checked.OutputType(), Estimate: est, checked: checked, limit: c.limits.Eval}
	// Planning compiles constant regular expressions, so a bad one is
	// reported here, at load.
	if est.Max <= c.limits.Eval {
		e.fast, err = env.Program(checked,
			cel.InterruptCheckFrequency(interruptEvery),
			cel.EvalOptions(cel.OptOptimize))
		if err != nil {
			err = fmt.Errorf("planning the program: %w", err)
		}
	} else {
		_, err = e.trackedProgram() // its error says "planning the program"
	}
	if err != nil {
		return nil, diag.List{diag.Errorf(at(0), CodeCompile, "%v", err)}
	}
	return e, nil
}

func formatEstimate(e cost.Estimate) string {
	if e.Max == ^uint64(0) {
		return "unbounded"
	}
	return fmt.Sprintf("%d", e.Max)
}

// issueDiags turns CEL issues into diagnostics at the offending tokens.
// A field selection is reported at its name rather than at the dot before it.
func issueDiags(src common.Source, iss *cel.Issues, at PosFunc) diag.List {
	var ds diag.List
	var text []rune
	for _, e := range iss.Errors() {
		off := 0
		if e.Location != nil && e.Location.Line() > 0 {
			if o, ok := src.LocationOffset(e.Location); ok && o >= 0 {
				off = int(o)
			}
		}
		if strings.HasPrefix(e.Message, "undefined field") {
			if text == nil {
				text = []rune(src.Content())
			}
			off = fieldNameOffset(text, off)
		}
		msg := e.Message
		if name, ok := strings.CutPrefix(msg, "undefined field '"); ok {
			if s := suggestField(strings.TrimSuffix(name, "'")); s != "" {
				msg += " (did you mean '" + s + "'?)"
			}
		}
		ds = append(ds, diag.Errorf(at(off), CodeCompile, "%s", msg))
	}
	return ds
}

// fieldNameOffset moves an offset at the dot of a selection (".name" or
// "?.name") to the start of the name.
func fieldNameOffset(text []rune, off int) int {
	i := off
	if i < len(text) && text[i] == '?' {
		i++
	}
	if i >= len(text) || text[i] != '.' {
		return off
	}
	i++
	for i < len(text) && unicode.IsSpace(text[i]) {
		i++
	}
	if i < len(text) {
		return i
	}
	return off
}
