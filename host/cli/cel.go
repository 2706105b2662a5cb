package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/kpi"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/state"
	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/pkg/trace"
)

// celExprFile is the file name positions in a command-line expression use.
const celExprFile = "expr"

func (a *app) celCommand() *cli.Command {
	return &cli.Command{
		Name:        "cel",
		Usage:       "work with CEL KPI checks",
		UsageText:   "assay cel eval --pack P --task LABEL --trace FILE [flags] EXPR\n\nExample:\n   assay cel eval --pack packs/support-desk.yaml --task refund_policy_answer \\\n       --trace turn.ndjson 'turn.answer.contains(\"policy\")'",
		Subcommands: []*cli.Command{a.celEvalCommand()},
	}
}

func (a *app) celEvalCommand() *cli.Command {
	return &cli.Command{
		Name:      "eval",
		Usage:     "evaluate a CEL expression against one turn: its value, type and cost",
		ArgsUsage: "EXPR",
		UsageText: `assay cel eval --pack P --task LABEL --trace FILE [--state-before FILE] [--state-after FILE]
            [--latency S] [--cost USD] [--format text|json] EXPR

Compiles EXPR in the environment of the pack's CEL checks (the variables turn, task,
state, before and scorer, and the helpers), evaluates it against the turn recorded in
--trace, and prints its value, its CEL type and the actual cost, with the load-time
estimate and the limits. A bool or double expression is also scored as a check would
be. Problems in EXPR are reported at expr:line:col. The scorer variable is zero here.
Exit 0 when EXPR evaluated, 2 when it does not compile or errors on this turn.

Example:
   assay cel eval --pack packs/support-desk.yaml --task refund_policy_answer \
       --trace turn.ndjson 'keywords_ratio(turn.answer, ["refund", "policy"])'
   assay cel eval --pack packs/example.yaml --task task_create_release_blocker \
       --trace turn.ndjson --state-before before.json --state-after after.json \
       --format json 'size(state.tasks) - size(before.tasks)'`,
		Flags: []cli.Flag{
			packFlag(),
			&cli.StringFlag{Name: "task", Required: true, Usage: "task `LABEL` in the pack"},
			&cli.StringFlag{Name: "trace", Required: true, Usage: "NDJSON trace `FILE` of the turn"},
			&cli.StringFlag{Name: "state-before", Usage: "Company OS snapshot `FILE` from before the turn (the before variable)"},
			&cli.StringFlag{Name: "state-after", Usage: "Company OS snapshot `FILE` from after the turn (the state variable)"},
			&cli.Float64Flag{Name: "latency", Usage: "the turn's latency in `SECONDS` (turn.latency_s)"},
			&cli.Float64Flag{Name: "cost", Usage: "the turn's cost in `USD` (turn.cost_usd)"},
			formatFlag(),
		},
		Action: a.celEval,
	}
}

// celEvalReport is what `cel eval` prints.
type celEvalReport struct {
	Expr     string     `json:"expr"`
	Value    any        `json:"value,omitempty"`
	Type     string     `json:"type"`
	Cost     uint64     `json:"cost"`
	Estimate [2]uint64  `json:"estimate"` // min, max
	Limits   kpi.Limits `json:"limits"`
	// FitsEstimate is false when the turn is larger than the sizes the
	// estimate assumes: then the estimate does not bound the cost, the
	// limits do.
	FitsEstimate bool          `json:"fits_estimate"`
	Check        *celEvalCheck `json:"check,omitempty"`
	Error        string        `json:"error,omitempty"`
}

// celEvalCheck is how the expression would score as a pack check.
type celEvalCheck struct {
	Score  float64 `json:"score"`
	Passed bool    `json:"passed"`
	// Error is set when the value would be a check error (a double outside
	// [0,1]): the check would score 0.
	Error string `json:"error,omitempty"`
}

func (a *app) celEval(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	if c.NArg() != 1 {
		return invalidf("cel eval: want exactly one EXPR argument, got %d (quote the expression)", c.NArg())
	}
	src := c.Args().First()
	rt, err := a.startup(c, false)
	if err != nil {
		return err
	}
	defer rt.close()
	checker := kpi.NewChecker()
	task, err := a.celTask(c, rt, checker)
	if err != nil {
		return err
	}
	in, err := a.celInput(c, task)
	if err != nil {
		return err
	}
	e, ds := checker.Compile(src, kpi.TextPos(celExprFile, src))
	if len(ds) > 0 {
		fmt.Fprint(a.stderr, ds.Render(map[string][]byte{celExprFile: []byte(src)}))
		return &ExitError{Code: ExitInvalid, Err: fmt.Errorf("expression does not compile")}
	}
	act, err := kpi.NewActivation(task, in)
	if err != nil {
		return hostErr(fmt.Errorf("building the CEL variables: %w", err))
	}
	r := celEvalReport{Expr: src, Type: e.TypeName(), Estimate: [2]uint64{e.Estimate.Min, e.Estimate.Max},
		Limits: checker.Limits(), FitsEstimate: act.Fits()}
	v, cost, evalErr := e.EvalActual(c.Context, act)
	r.Cost = cost
	if evalErr != nil {
		r.Error = evalErr.Error()
	} else {
		r.Value = celJSON(v)
		r.Check = asCheck(v)
	}
	if format == "json" {
		if err := printJSON(a.stdout, r); err != nil {
			return hostErr(fmt.Errorf("writing the result: %w", err))
		}
	} else {
		a.printCelEval(r)
	}
	if evalErr != nil {
		return &ExitError{Code: ExitInvalid}
	}
	return nil
}

// celTask loads --pack with the CEL checker (printing its diagnostics) and
// returns its task --task.
func (a *app) celTask(c *cli.Context, rt *runtime, checker *kpi.Checker) (*pack.Task, error) {
	opts := pack.Options{Schema: rt.schema, Scorers: rt.manifest.Descriptions(), Checks: []pack.Check{checker}}
	packPath := c.String("pack")
	p, diags := pack.Load(packPath, opts)
	if len(diags) > 0 {
		var b []byte
		if p != nil {
			b = p.Source
		} else {
			b, _ = os.ReadFile(packPath)
		}
		fmt.Fprint(a.stderr, diags.Render(map[string][]byte{packPath: b}))
	}
	if p == nil || diags.HasErrors() {
		return nil, &ExitError{Code: ExitInvalid, Err: fmt.Errorf("pack %s is not valid", packPath)}
	}
	task := p.Task(c.String("task"))
	if task == nil {
		labels := make([]string, len(p.Tasks))
		for i, t := range p.Tasks {
			labels[i] = t.Label
		}
		return nil, invalidf("--task: pack %s has no task %q (tasks: %s)", packPath, c.String("task"), strings.Join(labels, ", "))
	}
	return task, nil
}

// celInput reads the turn the flags describe: --trace, the snapshots,
// --latency and --cost.
func (a *app) celInput(c *cli.Context, task *pack.Task) (kpi.Input, error) {
	in := kpi.Input{Label: task.Label, Persona: task.Persona}
	var err error
	if in.Turn, err = a.celTrace(c.String("trace")); err != nil {
		return in, err
	}
	if in.Before, err = a.celState("state-before", c.String("state-before")); err != nil {
		return in, err
	}
	if in.State, err = a.celState("state-after", c.String("state-after")); err != nil {
		return in, err
	}
	if c.IsSet("latency") {
		v := c.Float64("latency")
		in.LatencyS = &v
	}
	if c.IsSet("cost") {
		v := c.Float64("cost")
		in.CostUSD = &v
	}
	return in, nil
}

func (a *app) printCelEval(r celEvalReport) {
	w := a.stdout
	if r.Error != "" {
		fmt.Fprintf(w, "error: %s\n", r.Error)
	} else {
		b, err := json.MarshalIndent(r.Value, "", "  ")
		if err != nil {
			b = []byte(fmt.Sprint(r.Value))
		}
		fmt.Fprintf(w, "value: %s\n", b)
	}
	fmt.Fprintf(w, "type:  %s\n", r.Type)
	fits := ""
	if !r.FitsEstimate {
		fits = " for turns within the estimate's sizes; this turn is larger, so only the limits bound its cost"
	}
	fmt.Fprintf(w, "cost:  %d (estimated %d..%d%s; limits: %d per evaluation, %d per turn)\n",
		r.Cost, r.Estimate[0], r.Estimate[1], fits, r.Limits.Eval, r.Limits.Turn)
	switch {
	case r.Check != nil && r.Check.Error != "":
		fmt.Fprintf(w, "as a check: error (scores 0): %s\n", r.Check.Error)
	case r.Check != nil:
		fmt.Fprintf(w, "as a check: score %.3g, passed %v\n", r.Check.Score, r.Check.Passed)
	}
}

// maxRenderedTrace is the largest trace whose lines are shown under its
// diagnostics.
const maxRenderedTrace = 64 << 20

// celTrace parses the trace, printing its warnings; an unreadable or
// invalid trace is invalid input.
func (a *app) celTrace(path string) (*trace.Turn, error) {
	t, ds, err := trace.ParseFile(path)
	if len(ds) > 0 {
		var b []byte
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Size() <= maxRenderedTrace {
			b, _ = os.ReadFile(path) // the source lines under the warnings; a huge trace is not read again whole
		}
		fmt.Fprint(a.stderr, ds.Render(map[string][]byte{path: b}))
	}
	if err != nil {
		return nil, invalidf("--trace: %w", err)
	}
	if ds.HasErrors() || t == nil {
		return nil, invalidf("--trace: %s is not a valid trace", path)
	}
	return t, nil
}

// celState reads a snapshot flag; an empty path is no snapshot.
func (a *app) celState(flag, path string) (*companyos.Snapshot, error) {
	if path == "" {
		return nil, nil
	}
	s, b, ds := state.ReadFile(path)
	if len(ds) > 0 {
		fmt.Fprint(a.stderr, ds.Render(map[string][]byte{path: b}))
	}
	if s == nil || ds.HasErrors() {
		return nil, invalidf("--%s: %s is not a valid snapshot", flag, path)
	}
	return s, nil
}

// asCheck scores a bool or double value as a pack check would (a double
// outside [0,1] is a check error, scoring 0), or returns nil for any other
// type.
func asCheck(v ref.Val) *celEvalCheck {
	switch x := v.(type) {
	case types.Bool:
		if x {
			return &celEvalCheck{Score: 1, Passed: true}
		}
		return &celEvalCheck{}
	case types.Double:
		f := float64(x)
		if math.IsNaN(f) || f < 0 || f > 1 {
			return &celEvalCheck{Error: fmt.Sprintf("%v: %v", kpi.ErrOutOfRange, f)}
		}
		return &celEvalCheck{Score: f, Passed: f >= kpi.PassDouble}
	}
	return nil
}

// celJSON converts a CEL value to something encoding/json prints the way
// CEL would spell it. Native objects (turn, a tool call, a task) marshal by
// their json tags, which are their CEL field names.
func celJSON(v ref.Val) any {
	switch x := v.(type) {
	case types.Null:
		return nil
	case types.Double:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Sprint(f)
		}
		return f
	case types.Bytes:
		return []byte(x)
	case *types.Optional:
		if !x.HasValue() {
			return nil
		}
		return celJSON(x.GetValue())
	case traits.Mapper:
		out := map[string]any{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			out[fmt.Sprint(celJSON(k))] = celJSON(x.Get(k))
		}
		return out
	case traits.Lister:
		out := []any{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			out = append(out, celJSON(it.Next()))
		}
		return out
	case types.Timestamp, types.Duration:
		return fmt.Sprint(x)
	}
	return v.Value()
}
