package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verdict"
	"github.com/assay-eval/assay/pkg/diag"
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
		if ev, stored, err = a.evalReport(c.Context, c.String(flagDB), c.String("report")); err != nil {
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
		src, err := os.ReadFile(path)
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
func (a *app) evalReport(ctx context.Context, dsn, id string) (verdict.Evaluation, json.RawMessage, error) {
	var ev verdict.Evaluation
	runID, err := strconv.ParseInt(strings.TrimSpace(id), 10, 64)
	if err != nil || runID <= 0 {
		return ev, nil, invalidf("--report: run id %q is not a positive integer", id)
	}
	if !store.IsPostgresURL(dsn) {
		if _, err := os.Stat(dsn); err != nil {
			return ev, nil, hostErr(fmt.Errorf("--report: no database at %s (set --db or ASSAY_DB): %w", dsn, err))
		}
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return ev, nil, hostErr(err)
	}
	defer st.Close()
	run, err := st.RunByID(ctx, runID)
	if errors.Is(err, store.ErrNotFound) {
		return ev, nil, invalidf("--report: no run %d in %s", runID, dsn)
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

var evalUnknownField = regexp.MustCompile(`unknown field "([^"]*)"`)

// parseEvalFile decodes FILE.json strictly; every problem has a line:col.
func parseEvalFile(path string, src []byte) (verdict.Input, diag.List) {
	var in verdict.Input
	var f evalFileJSON
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	err := dec.Decode(&f)
	if err == nil && dec.More() {
		err = errors.New("unexpected data after the top-level value")
		if _, serr := dec.Token(); serr != nil {
			err = serr
		}
	}
	if err != nil {
		return in, diag.List{evalDecodeDiag(path, src, err)}
	}

	var diags diag.List
	at := func(keys ...string) diag.Pos { return diag.OffsetPos(path, src, int(evalKeyOffset(src, keys...))) }
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
		t := f.Tests
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
		in.Tests = t
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
func evalDecodeDiag(path string, src []byte, err error) diag.Diagnostic {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off := se.Offset - 1
		if se.Offset >= int64(len(src)) {
			off = int64(len(src))
		}
		return diag.Errorf(diag.OffsetPos(path, src, int(off)), "eval.syntax", "not valid JSON: %v", se)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return diag.Errorf(diag.OffsetPos(path, src, int(int64(len(src)))), "eval.syntax", "not valid JSON: unexpected end of input")
	case errors.As(err, &te):
		start := evalValueStart(src, te.Offset)
		field := te.Field
		if key, ok := evalKeyBefore(src, start); ok && !strings.HasSuffix(field, key) {
			field = strings.TrimPrefix(field+"."+key, ".")
		}
		if field == "" {
			field = "the file"
		}
		return diag.Errorf(diag.OffsetPos(path, src, int(start)), "eval.type", "%s: want %s, got %s", field, evalTypeName(te.Type.String()), te.Value)
	}
	if m := evalUnknownField.FindStringSubmatch(err.Error()); m != nil {
		return diag.Errorf(diag.OffsetPos(path, src, int(evalKeyOffset(src, m[1]))), "eval.unknown_field",
			"unknown field %q: want taskId, metrics, tests, regressions, weightings, thresholds, kind or content", m[1])
	}
	return diag.Errorf(diag.Pos{File: path}, "eval.syntax", "%v", err)
}

func evalTypeName(t string) string {
	switch {
	case strings.HasPrefix(t, "map"), strings.HasPrefix(t, "verdict."), strings.HasPrefix(t, "cli."), strings.HasPrefix(t, "struct"):
		return "an object"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.Contains(t, "float"), strings.Contains(t, "int"):
		return "a number"
	case t == "string":
		return "a string"
	}
	return t
}

// evalValueStart finds where the value that ends at off (a scalar) or opens
// just before off (an object or list) starts.
func evalValueStart(src []byte, off int64) int64 {
	off = min(off, int64(len(src)))
	if off <= 0 {
		return 0
	}
	last := src[off-1]
	switch {
	case last == '{' || last == '[':
		return off - 1
	case last == '"':
		for i := off - 2; i >= 0; i-- {
			if src[i] == '"' {
				bs := 0
				for j := i - 1; j >= 0 && src[j] == '\\'; j-- {
					bs++
				}
				if bs%2 == 0 {
					return i
				}
			}
		}
		return 0
	}
	i := off
	for i > 0 && strings.IndexByte("0123456789.eE+-truefalsn", src[i-1]) >= 0 {
		i--
	}
	return i
}

// evalKeyBefore returns the object key whose value starts at off.
func evalKeyBefore(src []byte, off int64) (string, bool) {
	i := off - 1
	for i >= 0 && strings.IndexByte(" \t\r\n", src[i]) >= 0 {
		i--
	}
	if i < 0 || src[i] != ':' {
		return "", false
	}
	i--
	for i >= 0 && strings.IndexByte(" \t\r\n", src[i]) >= 0 {
		i--
	}
	if i < 0 || src[i] != '"' {
		return "", false
	}
	end := i
	start := evalValueStart(src, end+1)
	var key string
	if err := json.Unmarshal(src[start:end+1], &key); err != nil {
		return "", false
	}
	return key, true
}

// evalKeyOffset finds the offset of the object key path (each key searched
// after the previous one); 0 when not found.
func evalKeyOffset(src []byte, keys ...string) int64 {
	var off int64
	for _, k := range keys {
		quoted, _ := json.Marshal(k)
		re := regexp.MustCompile(regexp.QuoteMeta(string(quoted)) + `\s*:`)
		loc := re.FindIndex(src[off:])
		if loc == nil {
			return off
		}
		off += int64(loc[0])
	}
	return off
}
