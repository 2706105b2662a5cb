package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verdict"
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/jsonpos"
)

func (a *app) evalCommand() *cli.Command {
	return &cli.Command{
		Name:  "eval",
		Usage: "evaluate metrics, tests and an artifact into a verdict (PASS, PASS_WITH_WARNINGS, FAIL, BLOCKED, UNKNOWN)",
		UsageText: `assay eval [--metrics k=v,...] [--fail-on VERDICT] [--format text|json] FILE.json
   assay eval --metrics k=v,... [--tests passed=N,failed=N,skipped=N] [--regression TEXT]...
              [--thresholds pass=X,passWithWarnings=Y] [--task-id ID] [--fail-on VERDICT]
   assay eval --report RUN_ID [--fail-on VERDICT]

FILE.json holds "metrics" (name -> number in [0,1]; null means not measured) and
optionally "taskId", "tests" {passed, failed, skipped, total}, "regressions" [...],
"weightings" (name -> weight, overriding the defaults per key), "thresholds"
{pass, passWithWarnings}, and "kind" + "content" to validate an artifact (kinds:
` + strings.Join(verdict.Kinds(), ", ") + `; content is text or a JSON object).
--metrics adds to (and overrides) the file's metrics. --report prints the verdict
stored with a verified run (see 'assay verify').

The score is the weighted mean of the metrics present (defaults: correctness .30,
testResults .20, requirementCoverage .15, architecture .10, security .10,
performance .05, maintainability .05, artifactValidity .05); confidence, cost and
latency are kept but never weighted.

Exit codes: 0; 1 with --fail-on when the verdict is that one or worse
(PASS > PASS_WITH_WARNINGS > FAIL > BLOCKED; UNKNOWN fails every --fail-on);
2 invalid input; 3 the database cannot be read.

Example:
   assay eval --metrics correctness=0.9,security=0.8 --tests passed=42,failed=0
   assay eval --format json --fail-on FAIL result.json
   assay eval --report 12`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "metrics", Usage: "metrics as `NAME=VALUE,...`"},
			&cli.StringFlag{Name: "tests", Usage: "test counts as `passed=N,failed=N[,skipped=N][,total=N]`"},
			&cli.StringSliceFlag{Name: "regression", Usage: "a regression `TEXT` (repeatable)"},
			&cli.StringFlag{Name: "thresholds", Usage: "score thresholds as `pass=X,passWithWarnings=Y`"},
			&cli.StringFlag{Name: "task-id", Usage: "task `ID` to put in the output"},
			&cli.StringFlag{Name: "report", Usage: "print the verdict stored for verified run `RUN_ID`"},
			&cli.StringFlag{Name: "fail-on", Usage: "exit 1 when the verdict is `VERDICT` or worse"},
			formatFlag(),
		},
		Action: a.eval,
	}
}

func (a *app) eval(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	var failOn verdict.Verdict
	if s := c.String("fail-on"); s != "" {
		if failOn, err = verdict.ParseVerdict(s); err != nil {
			return invalidf("--fail-on: %w", err)
		}
	}
	if c.NArg() > 1 {
		return invalidf("eval: want at most one FILE.json, got %d arguments", c.NArg())
	}

	var ev verdict.Evaluation
	var stored json.RawMessage
	if c.IsSet("report") {
		if c.NArg() > 0 || c.IsSet("metrics") || c.IsSet("tests") || c.IsSet("regression") || c.IsSet("thresholds") {
			return invalidf("eval: --report takes no FILE.json, --metrics, --tests, --regression or --thresholds")
		}
		if ev, stored, err = a.evalReport(c.Context, c.String(flagDB), c.String("report"), a.dbOptions(c)); err != nil {
			return err
		}
	} else {
		in, err := a.evalInput(c)
		if err != nil {
			return err
		}
		ev = verdict.Evaluate(in)
	}

	if format == "json" {
		var out []byte
		if stored != nil {
			var buf bytes.Buffer
			if err := json.Indent(&buf, stored, "", "  "); err != nil {
				return hostErr(fmt.Errorf("printing the stored verdict: %w", err))
			}
			out = buf.Bytes()
		} else if out, err = json.MarshalIndent(ev, "", "  "); err != nil {
			return hostErr(fmt.Errorf("printing the evaluation: %w", err))
		}
		fmt.Fprintf(a.stdout, "%s\n", out)
	} else {
		writeEvaluation(a.stdout, ev)
	}
	if failOn != "" && ev.Verdict.AtOrWorse(failOn) {
		return &ExitError{Code: ExitGate, Err: fmt.Errorf("verdict %s is %s or worse (--fail-on)", ev.Verdict, failOn)}
	}
	return nil
}

// evalInput builds the evaluation input from FILE.json and the flags.
func (a *app) evalInput(c *cli.Context) (verdict.Input, error) {
	in := verdict.Input{Metrics: map[string]float64{}}
	if c.NArg() == 0 && !c.IsSet("metrics") && !c.IsSet("tests") {
		return in, invalidf("eval: give FILE.json, --metrics, --tests or --report (see 'assay eval --help')")
	}
	if c.NArg() == 1 {
		path := c.Args().First()
		src, err := jsonpos.ReadFile(path, maxEvalFile)
		if err != nil {
			return in, invalidf("eval: reading %w", err)
		}
		fin, diags := parseEvalFile(path, src)
		if diags.HasErrors() {
			diags.Sort()
			return in, invalid(errors.New(strings.TrimSuffix(diags.Render(map[string][]byte{path: src}), "\n")))
		}
		if len(diags) > 0 {
			fmt.Fprint(a.stderr, diags.Render(map[string][]byte{path: src}))
		}
		in = fin
	}
	if s := c.String("metrics"); c.IsSet("metrics") {
		kv, err := evalPairs("--metrics", s)
		if err != nil {
			return in, invalid(err)
		}
		for _, p := range kv {
			if err := checkMetric(p.key, p.val); err != nil {
				return in, invalidf("--metrics: %w", err)
			}
			in.Metrics[p.key] = p.val
		}
		flagged := map[string]float64{}
		for _, p := range kv {
			flagged[p.key] = p.val
		}
		for _, k := range unweightedMetrics(flagged, in.Weightings) {
			fmt.Fprintf(a.stderr, "warning: --metrics: %s\n", unweightedMetricWarning(k))
		}
	}
	if c.IsSet("tests") {
		t, err := evalTestsFlag(c.String("tests"))
		if err != nil {
			return in, invalid(err)
		}
		in.Tests = t
	}
	for _, r := range c.StringSlice("regression") {
		if strings.TrimSpace(r) == "" {
			return in, invalidf("--regression: must not be blank")
		}
	}
	in.Regressions = append(in.Regressions, c.StringSlice("regression")...)
	if c.IsSet("thresholds") {
		kv, err := evalPairs("--thresholds", c.String("thresholds"))
		if err != nil {
			return in, invalid(err)
		}
		for _, p := range kv {
			v := p.val
			switch p.key {
			case "pass":
				in.Thresholds.Pass = &v
			case "passWithWarnings", "pass_with_warnings", "warn":
				in.Thresholds.PassWithWarnings = &v
			default:
				return in, invalidf("--thresholds: unknown threshold %q: want pass or passWithWarnings", p.key)
			}
		}
		if err := in.Thresholds.Check(); err != nil {
			return in, invalidf("--thresholds: %w", err)
		}
	}
	if c.IsSet("task-id") {
		in.TaskID = c.String("task-id")
	}
	return in, nil
}

// evalReport reads the verdict stored with a verified run.
func (a *app) evalReport(ctx context.Context, dsn, id string, opts []store.Option) (verdict.Evaluation, json.RawMessage, error) {
	var ev verdict.Evaluation
	runID, err := strconv.ParseInt(strings.TrimSpace(id), 10, 64)
	if err != nil || runID <= 0 {
		return ev, nil, invalidf("--report: run id %q is not a positive integer", id)
	}
	if !store.IsPostgresURL(dsn) && !store.IsKeywordDSN(dsn) {
		if _, err := os.Stat(dsn); err != nil {
			return ev, nil, hostErr(fmt.Errorf("--report: no database at %s (set --db or ASSAY_DB): %w", store.Redact(dsn), err))
		}
	}
	st, err := store.Open(ctx, dsn, opts...)
	if err != nil {
		return ev, nil, hostErr(err)
	}
	defer st.Close()
	run, err := st.RunByID(ctx, runID)
	if errors.Is(err, store.ErrNotFound) {
		return ev, nil, invalidf("--report: no run %d in %s", runID, store.Redact(dsn))
	}
	if err != nil {
		return ev, nil, hostErr(err)
	}
	if len(run.Verdict) == 0 {
		return ev, nil, invalidf("--report: run %d (candidate %q, status %s) has no stored verdict", runID, run.Candidate, run.Status)
	}
	if err := json.Unmarshal(run.Verdict, &ev); err != nil {
		return ev, nil, hostErr(fmt.Errorf("--report: reading the verdict stored for run %d: %w", runID, err))
	}
	return ev, run.Verdict, nil
}

// writeEvaluation prints an evaluation for a person.
func writeEvaluation(w io.Writer, ev verdict.Evaluation) {
	fmt.Fprintf(w, "verdict     %s\n", ev.Verdict)
	if ev.TaskID != "" {
		fmt.Fprintf(w, "task        %s\n", ev.TaskID)
	}
	fmt.Fprintf(w, "score       %.3f\n", ev.Score)
	fmt.Fprintf(w, "confidence  %.3f\n", ev.Confidence)
	if ev.Tests != nil {
		fmt.Fprintf(w, "tests       %d passed, %d failed", ev.Tests.Passed, ev.Tests.Failed)
		if ev.Tests.Skipped > 0 {
			fmt.Fprintf(w, ", %d skipped", ev.Tests.Skipped)
		}
		if ev.Tests.Total != nil {
			fmt.Fprintf(w, " (of %d)", *ev.Tests.Total)
		}
		fmt.Fprintln(w)
	}
	if len(ev.Metrics) > 0 {
		fmt.Fprintln(w, "metrics")
		names := make([]string, 0, len(ev.Metrics))
		for k := range ev.Metrics {
			names = append(names, k)
		}
		sort.Strings(names)
		weights := verdict.DefaultWeights()
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, k := range names {
			note := ""
			if verdict.Unweighted(k) {
				note = "\t(not weighted)"
			} else if wt, ok := weights[k]; ok {
				note = fmt.Sprintf("\t(default weight %.2f)", wt)
			}
			fmt.Fprintf(tw, "  %s\t%.3f%s\n", k, ev.Metrics[k], note)
		}
		tw.Flush()
	}
	if len(ev.Regressions) > 0 {
		fmt.Fprintln(w, "regressions")
		for _, r := range ev.Regressions {
			fmt.Fprintf(w, "  - %s\n", r)
		}
	}
	if ev.Artifact != nil {
		state := "valid"
		if !ev.Artifact.Valid {
			state = "INVALID"
		}
		fmt.Fprintf(w, "artifact    %s %s (score %.2f)\n", ev.Artifact.Kind, state, ev.Artifact.Score)
		for _, i := range ev.Artifact.Issues {
			fmt.Fprintf(w, "  - %s\n", i)
		}
	}
	if len(ev.Recommendations) > 0 {
		fmt.Fprintln(w, "recommendations")
		for _, r := range ev.Recommendations {
			fmt.Fprintf(w, "  - %s\n", r)
		}
	}
}

// evalPair is one NAME=VALUE of a flag.
type evalPair struct {
	key string
	val float64
}

// evalPairs parses "a=1,b=2"; a value that is not a finite number is an
// error naming it.
func evalPairs(flag, s string) ([]evalPair, error) {
	var out []evalPair
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: %q: want NAME=VALUE", flag, part)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s: %s: %q is not a number", flag, k, v)
		}
		if seen[k] {
			return nil, fmt.Errorf("%s: %s given twice", flag, k)
		}
		seen[k] = true
		out = append(out, evalPair{k, f})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no NAME=VALUE given", flag)
	}
	return out, nil
}

func evalTestsFlag(s string) (*verdict.Tests, error) {
	kv, err := evalPairs("--tests", s)
	if err != nil {
		return nil, err
	}
	t := &verdict.Tests{}
	for _, p := range kv {
		if p.val < 0 || p.val != math.Trunc(p.val) {
			return nil, fmt.Errorf("--tests: %s: want a whole number >= 0, got %v", p.key, p.val)
		}
		n := int(p.val)
		switch p.key {
		case "passed":
			t.Passed = n
		case "failed":
			t.Failed = n
		case "skipped":
			t.Skipped = n
		case "total":
			t.Total = &n
		default:
			return nil, fmt.Errorf("--tests: unknown count %q: want passed, failed, skipped or total", p.key)
		}
	}
	if err := checkTestTotal(t); err != nil {
		return nil, fmt.Errorf("--tests: %w", err)
	}
	return t, nil
}

// checkMetric rejects values a metric cannot take: cost and latency are
// non-negative, every other metric is in [0,1].
func checkMetric(name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s: %v is not a finite number", name, v)
	}
	if name == verdict.Cost || name == verdict.Latency {
		if v < 0 {
			return fmt.Errorf("%s: %v is negative", name, v)
		}
		return nil
	}
	if v < 0 || v > 1 {
		return fmt.Errorf("%s: %v is outside [0,1]", name, v)
	}
	return nil
}

// evalFileJSON is FILE.json.
type evalFileJSON struct {
	TaskID      string              `json:"taskId"`
	Metrics     map[string]*float64 `json:"metrics"`
	Tests       *verdict.Tests      `json:"tests"`
	Regressions []string            `json:"regressions"`
	Weightings  map[string]*float64 `json:"weightings"`
	Thresholds  verdict.Thresholds  `json:"thresholds"`
	Kind        string              `json:"kind"`
	Content     json.RawMessage     `json:"content"`
}

// maxEvalFile bounds FILE.json.
const maxEvalFile = 64 << 20

// parseEvalFile decodes FILE.json strictly; every problem has a line:col.
func parseEvalFile(path string, src []byte) (verdict.Input, diag.List) {
	var in verdict.Input
	var f evalFileJSON
	s := jsonpos.Source{File: path, Src: src}
	root, err := jsonpos.Decode(src, &f, jsonpos.Options{})
	if err != nil {
		return in, diag.List{evalDecodeDiag(s, err)}
	}
	var diags diag.List
	at := func(keys ...string) diag.Pos { return s.Pos(evalKeyOffset(root, keys...)) }
	in.TaskID = f.TaskID
	in.Metrics = map[string]float64{}
	for k, v := range f.Metrics {
		if v == nil {
			continue // null: not measured
		}
		if err := checkMetric(k, *v); err != nil {
			diags = append(diags, diag.Errorf(at("metrics", k), "eval.value", "metrics.%v", err))
			continue
		}
		in.Metrics[k] = *v
	}
	if f.Tests != nil {
		diags = append(diags, evalTestsDiags(f.Tests, at)...)
		in.Tests = f.Tests
	}
	for i, r := range f.Regressions {
		if strings.TrimSpace(r) == "" {
			diags = append(diags, diag.Errorf(at("regressions"), "eval.value", "regressions[%d]: must not be blank", i))
		}
	}
	in.Regressions = f.Regressions
	if len(f.Weightings) > 0 {
		in.Weightings = map[string]float64{}
		for k, v := range f.Weightings {
			switch {
			case v == nil:
				diags = append(diags, diag.Errorf(at("weightings", k), "eval.value", "weightings.%s: want a number, got null", k))
			case verdict.Unweighted(k):
				diags = append(diags, diag.Errorf(at("weightings", k), "eval.value", "weightings.%s: %s is never weighted", k, k))
			case *v < 0:
				diags = append(diags, diag.Errorf(at("weightings", k), "eval.value", "weightings.%s: %v is negative", k, *v))
			default:
				in.Weightings[k] = *v
			}
		}
	}
	if err := f.Thresholds.Check(); err != nil {
		diags = append(diags, diag.Errorf(at("thresholds"), "eval.value", "%v", err))
	}
	in.Thresholds = f.Thresholds
	if f.Kind != "" && f.Content == nil {
		diags = append(diags, diag.Errorf(at("kind"), "eval.value", "kind %q is given without content: add \"content\" (text or a JSON object) to validate the artifact", f.Kind))
	} else if f.Kind != "" || f.Content != nil {
		kind := f.Kind
		if kind == "" {
			kind = verdict.KindRaw
			diags = append(diags, diag.Warnf(at("content"), "eval.kind", "content without kind, validated as raw (kinds: %s)",
				strings.Join(verdict.Kinds(), ", ")))
		}
		if _, ok := verdict.SpecFor(kind); !ok {
			diags = append(diags, diag.Warnf(at("kind"), "eval.kind", "unknown artifact kind %q, validated as raw (kinds: %s)",
				kind, strings.Join(verdict.Kinds(), ", ")))
		}
		in.Artifact = &verdict.Artifact{Kind: kind, Content: f.Content}
	}
	for _, k := range unweightedMetrics(in.Metrics, in.Weightings) {
		diags = append(diags, diag.Warnf(at("metrics", k), "eval.metric", "%s", unweightedMetricWarning(k)))
	}
	diags.Sort()
	return in, diags
}

// evalTestsDiags checks FILE.json's test counts; at positions a key path.
func evalTestsDiags(t *verdict.Tests, at func(keys ...string) diag.Pos) diag.List {
	var diags diag.List
	for name, n := range map[string]int{"passed": t.Passed, "failed": t.Failed, "skipped": t.Skipped} {
		if n < 0 {
			diags = append(diags, diag.Errorf(at("tests", name), "eval.value", "tests.%s: %d is negative", name, n))
		}
	}
	if t.Total != nil && *t.Total < 0 {
		diags = append(diags, diag.Errorf(at("tests", "total"), "eval.value", "tests.total: %d is negative", *t.Total))
	}
	if err := checkTestTotal(t); err != nil {
		diags = append(diags, diag.Errorf(at("tests", "total"), "eval.value", "tests.%v", err))
	}
	return diags
}

// checkTestTotal rejects a total below passed+failed: the counts contradict
// each other.
func checkTestTotal(t *verdict.Tests) error {
	if t.Total != nil && *t.Total >= 0 && *t.Total < t.Passed+t.Failed {
		return fmt.Errorf("total: %d is less than passed + failed (%d)", *t.Total, t.Passed+t.Failed)
	}
	return nil
}

// unweightedMetrics lists, sorted, the metrics that are neither weighted by
// default or by a weighting nor one of the kept-but-unweighted metrics: most
// likely a misspelling, which would silently not count.
func unweightedMetrics(metrics, weightings map[string]float64) []string {
	defaults := verdict.DefaultWeights()
	var out []string
	for k := range metrics {
		if _, ok := defaults[k]; ok || verdict.Unweighted(k) {
			continue
		}
		if _, ok := weightings[k]; ok {
			continue
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// unweightedMetricWarning says that metric k counts for nothing, suggesting
// the closest known metric name.
func unweightedMetricWarning(k string) string {
	msg := fmt.Sprintf("metric %q has no weight (not a default metric and no weighting given), so it does not count", k)
	best, bestD := "", 3
	for name := range verdict.DefaultWeights() {
		if d := diag.EditDistance(strings.ToLower(k), strings.ToLower(name)); d < bestD || (d == bestD && best != "" && name < best) {
			best, bestD = name, d
		}
	}
	if best != "" {
		msg += fmt.Sprintf("; did you mean %q?", best)
	}
	return msg
}

// evalDecodeDiag positions a decoding error.
func evalDecodeDiag(s jsonpos.Source, err error) diag.Diagnostic {
	var e *jsonpos.Error
	switch {
	case !errors.As(err, &e):
		return diag.Errorf(diag.Pos{File: s.File}, "eval.syntax", "%v", err)
	case errors.Is(err, jsonpos.ErrType):
		return s.Errorf(e.Off, "eval.type", "%s: %s", cmp.Or(e.Path, "the file"), e.Msg)
	case errors.Is(err, jsonpos.ErrUnknownField) && e.Path == "":
		return s.Errorf(e.Off, "eval.unknown_field", "%s: want taskId, metrics, tests, regressions, weightings, thresholds, kind or content", e.Msg)
	case errors.Is(err, jsonpos.ErrUnknownField):
		return s.Errorf(e.Off, "eval.unknown_field", "%v", e)
	}
	return s.Errorf(e.Off, "eval.syntax", "not valid JSON: %s", e.Msg)
}

// evalKeyOffset is the offset of the key at the end of the path keys, or of
// the last of them the file has (0 for none).
func evalKeyOffset(root *jsonpos.Node, keys ...string) int {
	off, n := 0, root
	for _, k := range keys {
		m := n.Get(k)
		if m == nil {
			break
		}
		off, n = m.Off, m.Value
	}
	return off
}
