package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/hashicorp/go-hclog"
	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/verify"
	"github.com/assay-eval/assay/pkg/diag"
)

// verifyMemoryLimit is verify's soft memory limit (runtime/debug).
const verifyMemoryLimit = 160 << 20

func (a *app) verifyCommand() *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "score whole harness runs: turn scores, gates, failure tags, verdicts and the Pareto frontier",
		UsageText: `assay verify --pack P (--run DIR)... | --turns FILE [--candidate ID] [--out DIR]
             [--db URL] [--in-process] [--baseline ID] [--fresh] [--format text|json]
             [--policy-version V] [--skill-version V]

Reads each candidate run (a harness directory with results/<label>.ndjson traces,
optional results.json metrics and state/<label>.{before,after}.json snapshots; or a
turns file with one JSON turn a line), scores every turn with the pack's scorers and
CEL checks, records each turn in the database as it completes, and writes
results.json and summary.json to --out. Running it again for the same pack and
candidate resumes an interrupted run; --fresh starts a new attempt.

A candidate whose run directory cannot be read is listed in summary.json's errors
and the others are verified. Each candidate's verdict follows its gates: FAIL
(BLOCKED when nothing scored), or PASS / PASS_WITH_WARNINGS with the reasons.
JSON numbers are at full precision; text prints 3 decimals (docs/verify.md).

Exit codes: 0 every candidate passed its gates; 1 a gate failed; 2 invalid input
(a candidate or turn that could not be read); 3 the host cannot run (invariant
mismatch, plugin or database failure, or a scorer with no result for all, or more
than --scorer-error-share, of a candidate's turns).

Example:
   assay verify --pack packs/example.yaml --run examples/runs/candidate-a \
       --run examples/runs/candidate-b --out out/`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "pack", Required: true, Usage: "eval pack `FILE`"},
			&cli.StringSliceFlag{Name: "run", Usage: "harness candidate `DIR` (repeatable)"},
			&cli.StringFlag{Name: "turns", Usage: "turns `FILE` (JSONL, one turn a line)"},
			&cli.StringFlag{Name: "candidate", Usage: "candidate `ID` (default: the run directory's or turns file's name)"},
			&cli.StringFlag{Name: "out", Usage: "write results.json and summary.json to `DIR`"},
			&cli.BoolFlag{Name: "in-process", Usage: "run the built-in scorers inside the host (debugging, performance baseline)"},
			&cli.StringFlag{Name: "baseline", Usage: "candidate `ID` to compare against for regressions"},
			&cli.BoolFlag{Name: "fresh", Usage: "start over as a new attempt instead of resuming"},
			&cli.StringFlag{Name: "policy-version", Usage: "the harness's policy `VERSION` (over run.json's)"},
			&cli.StringFlag{Name: "skill-version", Usage: "the harness's skill `VERSION`, a hash of the skill's content (over run.json's)"},
			&cli.IntFlag{Name: "batch-size", Value: 64, Usage: "cases per plugin call"},
			&cli.Float64Flag{Name: "scorer-error-share", Value: verify.DefaultScorerErrorShare,
				Usage: "exit 3 when a scorer fails on more than this `SHARE` of a candidate's turns (or on all of them)"},
			callTimeoutFlag(),
			formatFlag(),
		},
		Action: a.verify,
	}
}

func (a *app) verify(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// A verification allocates fast (each trace is parsed and dropped)
		// while its live heap stays small: a soft limit keeps the resident
		// set bounded on long runs at little cost. GOMEMLIMIT overrides it.
		debug.SetMemoryLimit(verifyMemoryLimit)
	}
	runs, turnsFile := c.StringSlice("run"), c.String("turns")
	if (len(runs) == 0) == (turnsFile == "") {
		return invalidf("give --run DIR (one or more) or --turns FILE")
	}
	if len(runs) > 1 && c.String("candidate") != "" {
		return invalidf("--candidate names a single run; with several --run each candidate is its directory's name")
	}
	share := c.Float64("scorer-error-share")
	if share <= 0 || share > 1 {
		return invalidf("--scorer-error-share %v: want a share in (0,1]", share)
	}
	s, err := a.openSession(c, c.String("pack"), true, c.Bool("in-process"))
	if err != nil {
		return err
	}
	defer s.close()

	prog := newProgress(a.stderr, "verify")
	defer prog.done()
	start := func(ctx context.Context) error {
		if err := s.start(ctx); err != nil {
			return err
		}
		if format == "text" {
			fmt.Fprintf(a.stdout, "pack %s (sha256 %s)\n", s.pack.Name(), short(s.pack.SHA256))
		}
		return nil
	}
	rep, err := verify.Run(c.Context, verify.Request{
		Engine:           s.engineConfig(c.Int("batch-size"), a.logger(), prog.update),
		Runs:             runs,
		TurnsFile:        turnsFile,
		Candidate:        c.String("candidate"),
		Baseline:         c.String("baseline"),
		Fresh:            c.Bool("fresh"),
		PolicyVersion:    c.String("policy-version"),
		SkillVersion:     c.String("skill-version"),
		OutDir:           c.String("out"),
		ScorerErrorShare: share,
		Start:            start,
		Diagnostics:      func(ds diag.List) { fmt.Fprint(a.stderr, ds.Render(nil)) },
		OnCandidate: func(out *verify.Outcome, cr *verify.CandidateReport) {
			prog.done()
			if format == "text" {
				printCandidate(a.stdout, out, cr)
			}
		},
	})
	if err != nil {
		return verifyErr(err)
	}
	return a.printReport(rep, format)
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
	case errors.As(err, &ee):
		return err
	case errors.As(err, &ie):
		return invalid(err)
	case errors.Is(err, context.Canceled):
		return hostErr(fmt.Errorf("interrupted; run the same command again to resume: %w", err))
	}
	return hostErr(err)
}

// printReport prints the end of the report (the frontier, or the whole
// report as JSON), what could not be verified, and returns the exit status.
func (a *app) printReport(rep *verify.Report, format string) error {
	if format == "json" {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printFrontier(a.stdout, rep.Frontier)
		printHealth(a.stdout, rep.ScorerHealth, false)
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

// printCandidate prints one candidate's per-task table and summary.
func printCandidate(w io.Writer, out *verify.Outcome, cs *verify.CandidateReport) {
	fmt.Fprintf(w, "\ncandidate %s", out.Candidate)
	if cs.Reused > 0 {
		fmt.Fprintf(w, " (resumed: %d recorded turns reused, their inputs unchanged)", cs.Reused)
	}
	fmt.Fprintln(w)
	printDrift(w, "  ", cs.Drift)
	if len(cs.RescoredLabels) > 0 {
		fmt.Fprintf(w, "  rescored (inputs changed since recorded): %s\n", strings.Join(cs.RescoredLabels, ", "))
	}
	if len(cs.RetriedLabels) > 0 {
		fmt.Fprintf(w, "  retried (unscored when recorded): %s\n", strings.Join(cs.RetriedLabels, ", "))
	}
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "  TASK\tSTATUS\tPROCESS\tKPI\tTURN\tTOOLS\tLATENCY\tFAILURE TAGS")
	for _, r := range out.Results {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.Label, r.Status, num(r.ProcessScore), num(r.KPIScore),
			num(r.TurnScore), r.ToolCalls, secs(r.LatencyS), strings.Join(r.FailureTags, ","))
	}
	tw.Flush()
	sm := cs.Summary
	fmt.Fprintf(w, "  mean score %.3f  finalize %.3f  errors %.3f  latency %s  tools %.3f  cost %s  unscored %d  missing %d\n",
		sm.MeanScore, sm.FinalizeRate, sm.ErrorRate, secs(sm.MeanLatencyS), sm.MeanToolCalls, usd(sm.MeanCostUSD), sm.Unscored, sm.Missing)
	if sm.Gates.Passed {
		fmt.Fprintln(w, "  gates: passed")
	} else {
		for _, g := range sm.Gates.Failed {
			fmt.Fprintf(w, "  gate FAILED: %s = %s (threshold %s)\n", g.Gate, fmtAny(g.Value), fmtAny(g.Threshold))
		}
	}
	v := cs.Verdict
	fmt.Fprintf(w, "  verdict: %s (score %.3f, confidence %.3f)\n", v.Verdict, v.Score, v.Confidence)
	for _, r := range v.Reasons {
		fmt.Fprintf(w, "    %s\n", r)
	}
}

// printFrontier prints the Pareto frontier line.
func printFrontier(w io.Writer, f []string) {
	if len(f) == 0 {
		fmt.Fprintln(w, "\nPareto frontier: none (no candidate passed every gate)")
		return
	}
	fmt.Fprintf(w, "\nPareto frontier: %s\n", strings.Join(f, ", "))
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
