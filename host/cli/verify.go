package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/hashicorp/go-hclog"
	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/governance"
	"github.com/assay-eval/assay/host/report"
	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/excerpt"
)

// verifyMemoryLimit is verify's soft memory limit (runtime/debug). A run's
// live heap no longer grows with its turns, and stays well below it; it is
// a backstop for the peaks of loading a large pack, where a lower limit
// would only make the collector work harder (docs/performance.md).
const verifyMemoryLimit = 160 << 20

func (a *app) verifyCommand() *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "score whole harness runs: turn scores, gates, failure tags, verdicts and the Pareto frontier",
		UsageText: `assay verify --pack P (--run DIR)... | --turns FILE | --otlp FILE [--label-attr K]
             [--candidate ID] [--out DIR]
             [--db URL] [--in-process] [--baseline ID] [--seed N] [--fresh] [--allow-outside-paths]
             [--format text|json] [--policy-version V] [--skill-version V]
             [--junit FILE] [--markdown FILE]

Reads each candidate run (a harness directory with results/<label>.ndjson traces,
optional results.json metrics and state/<label>.{before,after}.json snapshots; or a
turns file with one JSON turn a line; or OpenTelemetry GenAI traces, one OTLP/JSON
export request a line, one turn per trace: docs/otel.md), scores every turn with the pack's scorers and
CEL checks, records each turn in the database as it completes, and writes
results.json and summary.json to --out. Running it again for the same pack and
candidate resumes an interrupted run; --fresh starts a new attempt. A task may
have several epochs (repeated turns: results/<label>.<epoch>.ndjson, or "epoch"
in a turns line); each candidate gets pass@k, pass^k, its flaky tasks and a
bootstrap 95% interval of its mean, seeded by --seed (docs/scoring.md).

Every file a run names stays inside it: a turns file's paths inside the turns
file's directory, a run directory's files (symbolic links resolved) inside the
directory; --allow-outside-paths lifts this. Only regular files are read: a FIFO or
a device is refused. A refused file leaves its turn unscored (docs/run-input.md).

A candidate whose run directory cannot be read is listed in summary.json's errors
and the others are verified. Each candidate's verdict follows its gates: FAIL
(BLOCKED when nothing scored), or PASS / PASS_WITH_WARNINGS with the reasons.
JSON numbers are at full precision; text prints 3 decimals (docs/verify.md).
--junit and --markdown write the report for CI readers and job summaries
(docs/ci.md).

Exit codes: 0 every candidate passed its gates; 1 a gate failed; 2 invalid input
(a candidate or turn that could not be read); 3 the host cannot run (invariant
mismatch, plugin or database failure, or a scorer with no result for all, or more
than --scorer-error-share, of a candidate's turns).

Example:
   assay verify --pack packs/example.yaml --run examples/runs/candidate-a \
       --run examples/runs/candidate-b --out out/`,
		Flags: append([]cli.Flag{
			packFlag(),
			&cli.StringSliceFlag{Name: "run", Usage: "harness candidate `DIR` (repeatable)"},
			&cli.StringFlag{Name: "turns", Usage: "turns `FILE` (JSONL, one turn a line)"},
			&cli.StringFlag{Name: "otlp", Usage: "OTLP/JSON traces `FILE` (file exporter: one export request a line; docs/otel.md)"},
			&cli.StringFlag{Name: "label-attr", Value: verify.DefaultLabelAttr, Usage: "with --otlp: the span or resource `ATTRIBUTE` naming a trace's task"},
			&cli.StringFlag{Name: "candidate", Usage: "candidate `ID` (default: the run directory's or turns file's name)"},
			&cli.StringFlag{Name: "out", Usage: "write results.json and summary.json to `DIR`"},
			&cli.BoolFlag{Name: "in-process", Usage: "run the built-in scorers inside the host (debugging, performance baseline)"},
			&cli.StringFlag{Name: "baseline", Usage: "candidate `ID` to compare against for regressions"},
			&cli.Uint64Flag{Name: "seed", Value: score.DefaultSeed, Usage: "seed `N` of the bootstrap intervals (same input and seed, same intervals)"},
			&cli.BoolFlag{Name: "fresh", Usage: "start over as a new attempt instead of resuming"},
			&cli.BoolFlag{Name: "allow-outside-paths", Usage: "let a run's paths (trace_file, snapshot paths, symbolic links) leave its directory"},
			&cli.StringFlag{Name: "policy-version", Usage: "the harness's policy `VERSION` (over run.json's)"},
			&cli.StringFlag{Name: "skill-version", Usage: "the harness's skill `VERSION`, a hash of the skill's content (over run.json's)"},
			&cli.IntFlag{Name: "batch-size", Value: 64, Usage: "cases per plugin call"},
			&cli.Float64Flag{Name: "scorer-error-share", Value: verify.DefaultScorerErrorShare,
				Usage: "exit 3 when a scorer fails on more than this `SHARE` of a candidate's turns (or on all of them)"},
			callTimeoutFlag(),
			formatFlag(),
		}, append(ciFlags(), queueFlags()...)...),
		Action: a.verify,
	}
}

func (a *app) verify(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	setVerifyMemoryLimit()
	runs, turnsFile, otlpFile := c.StringSlice("run"), c.String("turns"), c.String("otlp")
	if err := checkVerifyInputs(c, runs, turnsFile, otlpFile); err != nil {
		return err
	}
	share := c.Float64("scorer-error-share")
	if share <= 0 || share > 1 {
		return invalidf("--scorer-error-share %v: want a share in (0,1]", share)
	}
	seed := c.Uint64("seed")
	pool, closePool, err := a.verifyPool(c)
	if err != nil {
		return err
	}
	defer closePool()
	// The turns file is read and checked while the pack loads (one core
	// loads the pack, the other opens the database and then reads the
	// turns); its problems are still reported after the pack's, by Run.
	var ahead *verify.TurnsIndex
	if turnsFile != "" {
		ahead = verify.IndexTurnsAhead(turnsFile, c.String("candidate"), c.Bool("allow-outside-paths"))
		defer ahead.Close()
	}
	s, err := a.openSession(c, c.String("pack"), true, c.Bool("in-process"))
	if err != nil {
		return err
	}
	defer s.close()
	col := ciCollector(c)
	prog := newProgress(a.stderr, "verify")
	defer prog.done()
	start := func(ctx context.Context) error {
		if err := s.start(ctx); err != nil {
			return err
		}
		if format == "text" && !c.Bool("detach") { // --detach prints the run id alone
			fmt.Fprintf(a.stdout, "pack %s (sha256 %s)\n", s.pack.Name(), short(s.pack.SHA256))
		}
		return nil
	}
	rep, err := verify.Run(c.Context, verify.Request{
		Engine:            s.engineConfig(c.Int("batch-size"), a.logger(), prog.update),
		Runs:              runs,
		TurnsFile:         turnsFile,
		TurnsIndex:        ahead,
		OTLPFile:          otlpFile,
		OTLPLabelAttr:     c.String("label-attr"),
		Candidate:         c.String("candidate"),
		Baseline:          c.String("baseline"),
		Fresh:             c.Bool("fresh"),
		AllowOutsidePaths: c.Bool("allow-outside-paths"),
		Seed:              &seed,
		PolicyVersion:     c.String("policy-version"),
		SkillVersion:      c.String("skill-version"),
		OutDir:            c.String("out"),
		ScorerErrorShare:  share,
		Start:             start,
		Queue:             a.queueScorer(c, pool, s),
		QueueWait:         a.queueWaiter(c, pool),
		Candidates:        oneCandidate(c),
		Diagnostics:       func(ds diag.List) { fmt.Fprint(a.stderr, ds.Render(nil)) },
		Govern:            governance.AfterVerify(s.rt.store, s.pack),
		OnCandidate: func(out *verify.Outcome, cr *verify.CandidateReport) {
			prog.done()
			if col != nil {
				col.Add(out, cr)
			}
			if format == "text" {
				printCandidate(a.stdout, out, cr)
			}
		},
	})
	if err != nil {
		return verifyErr(err)
	}
	if err := writeCIReports(c, rep, col); err != nil {
		return err
	}
	return a.printReport(rep, format)
}

// setVerifyMemoryLimit sets verify's soft memory limit unless GOMEMLIMIT
// does: a verification allocates fast (each trace is parsed and dropped)
// while its live heap stays small, so the limit keeps the resident set
// bounded on long runs at little cost.
func setVerifyMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(verifyMemoryLimit)
	}
}

// ciCollector keeps each turn's failed checks for --junit and --markdown;
// nil without them, so a run keeps nothing per turn (docs/performance.md).
func ciCollector(c *cli.Context) *report.Collector {
	if c.String("junit") == "" && c.String("markdown") == "" {
		return nil
	}
	return report.NewCollector()
}

// checkVerifyInputs checks that verify was given one kind of input.
func checkVerifyInputs(c *cli.Context, runs []string, turnsFile, otlpFile string) error {
	if inputCount(len(runs) > 0, turnsFile != "", otlpFile != "") != 1 {
		return invalidf("give --run DIR (one or more), --turns FILE or --otlp FILE")
	}
	if len(runs) > 1 && c.String("candidate") != "" {
		return invalidf("--candidate names a single run; with several --run each candidate is its directory's name")
	}
	return nil
}

// engineConfig is the verification engine's configuration for the session.
func (s *session) engineConfig(batchSize int, logger hclog.Logger, progress func(done, total int)) verify.Config {
	return verify.Config{
		Pack:          s.pack,
		Scorers:       s.host,
		Descriptions:  s.descriptions,
		Identities:    s.identities,
		CEL:           s.cel,
		Store:         s.rt.store,
		ScorerVersion: s.scorerVersion,
		HostVersion:   s.hostVersion,
		BatchSize:     batchSize,
		Logger:        logger,
		Progress:      progress,
	}
}

// verifyErr maps an error of verify.Run onto an exit code.
func verifyErr(err error) error {
	var ee *ExitError
	var ie *verify.InputError
	switch {
	case errors.Is(err, errDetached):
		return nil // verify --queue --detach: the run id is printed, the workers score it
	case errors.As(err, &ee):
		return err
	case errors.As(err, &ie):
		return invalid(err)
	case errors.Is(err, context.Canceled):
		return hostErr(fmt.Errorf("interrupted; run the same command again to resume: %w", err))
	case store.IsUnavailable(err):
		return hostErr(fmt.Errorf("interrupted: the database is gone or stopped answering "+
			"(see --db-timeout); the run is left resumable: run the same command again to resume "+
			"once the database is back: %w", err))
	}
	return hostErr(err)
}

// printReport prints the end of the report (the frontier, or the whole
// report as JSON), what could not be verified, and returns the exit status.
func (a *app) printReport(rep *verify.Report, format string) error {
	if format == "json" {
		if err := rep.WriteJSON(a.stdout); err != nil {
			return err
		}
	} else {
		printFrontier(a.stdout, rep.Frontier, rep.NotDistinguishable.All())
		printHealth(a.stdout, rep.ScorerHealth, false)
		printFired(a.stdout, rep.KillCriteria)
		for _, w := range rep.Warnings {
			fmt.Fprintf(a.stdout, "warning: %s\n", w)
		}
		if n := len(rep.InputWarnings) + rep.InputWarningsOmitted; n == 1 {
			fmt.Fprintln(a.stdout, "warning: the input had 1 warning (on stderr above; input_warnings in the JSON)")
		} else if n > 1 {
			fmt.Fprintf(a.stdout, "warning: the input had %d warnings (on stderr above; input_warnings in the JSON)\n", n)
		}
	}
	for _, e := range rep.Errors {
		fmt.Fprintf(a.stderr, "candidate %s (%s) not verified: %s\n", e.Candidate, e.Input, e.Error)
	}
	status, msg := rep.Status()
	switch status {
	case verify.StatusHostFailed:
		return &ExitError{Code: ExitHost, Err: errors.New(msg)}
	case verify.StatusInvalidInput:
		return &ExitError{Code: ExitInvalid, Err: errors.New(msg)}
	case verify.StatusGateFailed:
		return &ExitError{Code: ExitGate}
	}
	return nil
}

// maxLabelsShown is how many labels a line of printLabels names; the JSON
// report names them all.
const maxLabelsShown = 20

// printLabels prints what names the labels of a candidate's turns, at most
// maxLabelsShown of them, saying how many more the JSON's key names.
func printLabels(w io.Writer, what string, labels []string, key string) {
	if len(labels) == 0 {
		return
	}
	shown := labels[:min(len(labels), maxLabelsShown)]
	fmt.Fprintf(w, "  %s: %s", what, excerpt.EscapeLine(strings.Join(shown, ", ")))
	if more := len(labels) - len(shown); more > 0 {
		fmt.Fprintf(w, " and %d more (%d in all; %s in summary.json and --format json)", more, len(labels), key)
	}
	fmt.Fprintln(w)
}

// printCandidate prints one candidate's per-task table and summary.
func printCandidate(w io.Writer, out *verify.Outcome, cs *verify.CandidateReport) {
	esc := excerpt.EscapeLine // labels and tags may come from an input: print no control byte raw
	fmt.Fprintf(w, "\ncandidate %s", esc(out.Candidate))
	if cs.Reused > 0 {
		turns, their := "turns", "their inputs"
		if cs.Reused == 1 {
			turns, their = "turn", "its input"
		}
		fmt.Fprintf(w, " (resumed: %d recorded %s reused, %s unchanged)", cs.Reused, turns, their)
	}
	fmt.Fprintln(w)
	printDrift(w, "  ", cs.Drift)
	printLabels(w, "rescored (inputs changed since recorded)", cs.RescoredLabels, "rescored_labels")
	printLabels(w, "retried (unscored when recorded)", cs.RetriedLabels, "retried_labels")
	printLabels(w, "scored on a retry (after a lost batch or a failed first try; each turn's diagnostics say how)", cs.ScoredOnRetryLabels, "scored_on_retry_labels")
	printLabels(w, "ignored (not a task of the pack; neither scored nor recorded)", cs.IgnoredLabels, "ignored_labels")
	printTurns(w, out.Results, cs.Epochs > 1)
	sm := cs.Summary
	fmt.Fprintf(w, "  mean score %.3f  finalize %.3f  errors %.3f  latency %s  tools %.3f  cost %s  unscored %d  missing %d\n",
		sm.MeanScore, sm.FinalizeRate, sm.ErrorRate, secs(sm.MeanLatencyS), sm.MeanToolCalls, usd(sm.MeanCostUSD), sm.Unscored, sm.Missing)
	printStats(w, cs)
	if sm.Gates.Passed {
		fmt.Fprintln(w, "  gates: passed")
	} else {
		for _, g := range sm.Gates.Failed {
			fmt.Fprintf(w, "  gate FAILED: %s = %s (threshold %s)\n", g.Gate, fmtAny(g.Value), fmtAny(g.Threshold))
		}
	}
	for _, n := range sm.Gates.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	v := cs.Verdict
	fmt.Fprintf(w, "  verdict: %s (score %.3f, confidence %.3f)\n", v.Verdict, v.Score, v.Confidence)
	for _, r := range v.Reasons {
		fmt.Fprintf(w, "    %s\n", esc(r))
	}
	for _, r := range v.Regressions {
		fmt.Fprintf(w, "    per-task regression: %s\n", r)
	}
}

// printTurns prints the per-task table, with an EPOCH column when a task
// has several epochs.
func printTurns(w io.Writer, rs []verify.TurnResult, epochs bool) {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	head := "  TASK\tSTATUS\tPROCESS\tKPI\tTURN\tTOOLS\tLATENCY\tFAILURE TAGS"
	if epochs {
		head = "  TASK\tEPOCH\tSTATUS\tPROCESS\tKPI\tTURN\tTOOLS\tLATENCY\tFAILURE TAGS"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rs {
		task := r.Label
		if epochs {
			task = fmt.Sprintf("%s\t%d", r.Label, r.Epoch)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", task, r.Status, num(r.ProcessScore), num(r.KPIScore),
			num(r.TurnScore), r.ToolCalls, secs(r.LatencyS), strings.Join(r.FailureTags, ","))
	}
	tw.Flush()
}

// printStats prints the mean's interval, pass^k and pass@k at the largest
// k, the flaky tasks and the paired comparison with the baseline.
func printStats(w io.Writer, cs *verify.CandidateReport) {
	sm := cs.Summary
	if sm.MeanScoreCI95 != nil {
		k := strconv.Itoa(sm.EpochsMin)
		fmt.Fprintf(w, "  mean score 95%% interval [%.3f, %.3f]  pass^%s %.3f  pass@%s %.3f  epochs %s\n",
			sm.MeanScoreCI95[0], sm.MeanScoreCI95[1], k, sm.PassHatK[k], k, sm.PassAtK[k], epochRange(sm.EpochsMin, sm.Epochs))
	}
	if len(sm.FlakyTasks) > 0 {
		fmt.Fprintf(w, "  flaky tasks (epochs disagree on pass): %s\n", strings.Join(sm.FlakyTasks, ", "))
	}
	if p := cs.Paired; p != nil && p.CI95 != nil {
		verdict := "not a regression"
		if p.Regression {
			verdict = "a regression"
		}
		fmt.Fprintf(w, "  against baseline %s: mean paired delta %.3f, 95%% interval [%.3f, %.3f] over %d tasks: %s\n",
			p.Baseline, p.MeanDelta, p.CI95[0], p.CI95[1], p.Tasks, verdict)
	}
}

func epochRange(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

// printFrontier prints the Pareto frontier line, and the pairs of frontier
// candidates whose mean intervals overlap.
func printFrontier(w io.Writer, f []string, same iter.Seq2[string, string]) {
	if len(f) == 0 {
		fmt.Fprintln(w, "\nPareto frontier: none (no candidate passed every gate)")
		return
	}
	bw := bufio.NewWriter(w) // a large frontier has many pairs
	defer bw.Flush()
	fmt.Fprintf(bw, "\nPareto frontier: %s\n", excerpt.EscapeLine(strings.Join(f, ", ")))
	for a, b := range same {
		fmt.Fprintf(bw, "  %s and %s: not distinguishable on this data (their mean score intervals overlap)\n", a, b)
	}
}

func num(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *p)
}

func secs(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.1fs", *p)
}

func usd(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("$%.4f", *p)
}

func fmtAny(v any) string {
	switch x := v.(type) {
	case float64:
		return fmt.Sprintf("%.3f", x)
	case *float64:
		return num(x)
	}
	return fmt.Sprint(v)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
