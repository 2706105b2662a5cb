package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/verify"
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/excerpt"
)

func (a *app) scoreCommand() *cli.Command {
	return &cli.Command{
		Name:  "score",
		Usage: "score one turn and explain every check",
		UsageText: `assay score --pack P --task LABEL --trace FILE [--state-before FILE] [--state-after FILE]
            [--latency S] [--cost USD] [--in-process] [--format text|json]

Scores a single turn exactly as verify would and prints the process score, the KPI
score, the turn score, each check with its detail, and the failure tags: the tool a
pack author uses to see why a turn scored what it did. Nothing is recorded.

Example:
   assay score --pack testdata/fixtures/pack.yaml --task create_blocker \
       --trace testdata/fixtures/traces/create_blocker.good.ndjson \
       --state-before testdata/fixtures/state/create_blocker.before.json \
       --state-after testdata/fixtures/state/create_blocker.good.after.json`,
		Flags: []cli.Flag{
			packFlag(),
			&cli.StringFlag{Name: "task", Required: true, Usage: "task `LABEL` in the pack"},
			&cli.StringFlag{Name: "trace", Required: true, Usage: "NDJSON trace `FILE` of the turn"},
			&cli.StringFlag{Name: "state-before", Usage: "Company OS snapshot `FILE` from before the turn"},
			&cli.StringFlag{Name: "state-after", Usage: "Company OS snapshot `FILE` from after the turn"},
			&cli.Float64Flag{Name: "latency", Usage: "the turn's latency in `SECONDS`"},
			&cli.Float64Flag{Name: "cost", Usage: "the turn's cost in `USD`"},
			&cli.BoolFlag{Name: "in-process", Usage: "run the built-in scorers inside the host"},
			callTimeoutFlag(),
			formatFlag(),
		},
		Action: a.score,
	}
}

func (a *app) score(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	for _, f := range []string{"trace", "state-before", "state-after"} {
		if p := c.String(f); p != "" {
			if _, err := os.Stat(p); err != nil {
				return invalidf("--%s: %v", f, err)
			}
		}
	}
	// Nothing is recorded: an existing database is checked, none is created.
	s, err := a.openSession(c, c.String("pack"), false, c.Bool("in-process"))
	if err != nil {
		return err
	}
	defer s.close()
	label := c.String("task")
	t := s.pack.Task(label)
	if t == nil {
		var labels []string
		for _, t := range s.pack.Tasks {
			labels = append(labels, t.Label)
		}
		return invalidf("--task: pack %s has no task %q (tasks: %s)", s.pack.Path, label, strings.Join(labels, ", "))
	}
	if err := s.start(c.Context); err != nil {
		return err
	}
	ts := verify.TurnSpec{Candidate: "score", Label: label, Persona: t.Persona, TracePath: c.String("trace"),
		Pos: diag.Pos{File: c.String("trace")}}
	if c.IsSet("latency") {
		v := c.Float64("latency")
		ts.LatencyS = &v
	}
	if c.IsSet("cost") {
		v := c.Float64("cost")
		ts.CostUSD = &v
	}
	if p := c.String("state-before"); p != "" {
		ts.StateBefore = verify.Part{Path: p, Pos: diag.Pos{File: p}}
	}
	if p := c.String("state-after"); p != "" {
		ts.StateAfter = verify.Part{Path: p, Pos: diag.Pos{File: p}}
	}
	eng, err := verify.New(verify.Config{
		Pack: s.pack, Scorers: s.host, Descriptions: s.descriptions, Identities: s.identities,
		CEL: s.cel, ScorerVersion: s.scorerVersion, HostVersion: s.hostVersion, Logger: a.logger(),
	})
	if err != nil {
		return hostErr(err)
	}
	out, err := eng.Verify(c.Context, &verify.Input{Candidate: "score", Turns: []verify.TurnSpec{ts}}, verify.Options{})
	if err != nil {
		return hostErr(err)
	}
	if out.Diagnostics.HasErrors() {
		// The turn's input could not be read: say why, once, and score nothing.
		fmt.Fprint(a.stderr, out.Diagnostics.Render(nil))
		return &ExitError{Code: ExitInvalid, Err: errors.New("the turn's input could not be read")}
	}
	var r *verify.TurnResult
	for i := range out.Results {
		if out.Results[i].Label == label {
			r = &out.Results[i]
		}
	}
	if format == "json" {
		if err := printJSON(a.stdout, r); err != nil {
			return err
		}
	} else {
		printTurn(a.stdout, r) // warnings (malformed trace lines, scorer diagnostics) are its notes
	}
	return nil
}

// printTurn explains one turn's scores and checks.
func printTurn(w io.Writer, r *verify.TurnResult) {
	esc := excerpt.EscapeLine // a label, detail or tag may come from an input: print no control byte raw
	fmt.Fprintf(w, "task %s (persona %s), scorer %s %s\n", esc(r.Label), esc(r.Persona), esc(string(r.Scorer.ID)), esc(r.Scorer.Version))
	fmt.Fprintf(w, "status %s\n", r.Status)
	fmt.Fprintf(w, "process score %s   kpi score %s   turn score %s\n", num(r.ProcessScore), num(r.KPIScore), num(r.TurnScore))
	fmt.Fprintf(w, "finalized %t   error %t   tool calls %d   latency %s   cost %s\n", r.Finalized, r.Error, r.ToolCalls, secs(r.LatencyS), usd(r.CostUSD))
	if len(r.Checks) > 0 {
		fmt.Fprintln(w, "checks:")
		tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
		for _, ch := range r.Checks {
			mark := "ok  "
			if !ch.Passed {
				mark = "FAIL"
			}
			tag := ""
			if ch.FailureTag != "" {
				tag = " [" + esc(ch.FailureTag) + "]"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%.3f\t%s\t%s%s\n", mark, esc(ch.Name), ch.Score, esc(ch.Source), esc(ch.Detail), tag)
		}
		tw.Flush()
	}
	if len(r.FailureTags) > 0 {
		fmt.Fprintf(w, "failure tags: %s\n", esc(strings.Join(r.FailureTags, ", ")))
	} else {
		fmt.Fprintln(w, "failure tags: none")
	}
	for _, d := range r.Diagnostics {
		fmt.Fprintf(w, "note: %s\n", excerpt.Escape(d))
	}
}
