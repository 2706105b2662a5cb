package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/verify"
	"github.com/assay-eval/assay/pkg/diag"
)

func (a *app) rescoreCommand() *cli.Command {
	return &cli.Command{
		Name:  "rescore",
		Usage: "re-score a candidate's stored evidence with the scorers installed now",
		UsageText: `assay rescore --pack P --candidate C [--run RUN_ID] [--out DIR] [--db URL]
              [--in-process] [--format text|json]

Reads the traces, state snapshots and metrics rows stored with the candidate's
latest run of the pack (or run RUN_ID), scores them again with the scorers
installed now, records the result as a run of the current scorer version, and
prints what changed: each changed turn's old and new score, the checks whose
result changed and the failure tags gained or lost, then the mean score, gates
and verdict. No harness file is read. With the scorers that produced the run,
nothing is scored again and it says so (docs/evidence.md).

--out writes results.json and summary.json as verify does, plus diff.json.

Example:
   assay rescore --pack packs/example.yaml --candidate candidate-a --out out/`,
		Flags: []cli.Flag{
			packFlag(),
			&cli.StringFlag{Name: "candidate", Required: true, Usage: "candidate `ID`"},
			&cli.Int64Flag{Name: "run", Usage: "rescore run `RUN_ID` instead of the candidate's latest"},
			&cli.StringFlag{Name: "out", Usage: "write results.json, summary.json and diff.json to `DIR`"},
			&cli.BoolFlag{Name: "in-process", Usage: "run the built-in scorers inside the host"},
			&cli.IntFlag{Name: "batch-size", Value: 64, Usage: "cases per plugin call"},
			callTimeoutFlag(),
			formatFlag(),
		},
		Action: a.rescore,
	}
}

func (a *app) rescore(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	s, err := a.openSession(c, c.String("pack"), true, c.Bool("in-process"))
	if err != nil {
		return err
	}
	defer s.close()
	prog := newProgress(a.stderr, "rescore")
	defer prog.done()
	res, err := verify.Rescore(c.Context, verify.RescoreRequest{
		Engine:      s.engineConfig(c.Int("batch-size"), a.logger(), prog.update),
		Candidate:   c.String("candidate"),
		RunID:       c.Int64("run"),
		OutDir:      c.String("out"),
		Start:       s.start,
		Diagnostics: func(ds diag.List) { fmt.Fprint(a.stderr, ds.Render(nil)) },
	})
	prog.done()
	if err != nil {
		return verifyErr(err)
	}
	if format == "json" {
		return printJSON(a.stdout, res)
	}
	printRescore(a.stdout, res)
	return nil
}

// printRescore prints a rescore: drift, the changed turns, the candidate.
func printRescore(w io.Writer, r *verify.Rescored) {
	d := r.Diff
	fmt.Fprintf(w, "rescored run %d (scorer version %s) as run %d (scorer version %s)\n",
		d.FromRun, short(d.FromScorerVersion), d.ToRun, short(d.ToScorerVersion))
	printDrift(w, "", r.Drift)
	if r.Unchanged {
		fmt.Fprintln(w, "unchanged: the installed scorers are the ones that scored this run; every turn was reused, nothing was scored again")
	}
	if len(r.NoEvidence) > 0 {
		fmt.Fprintf(w, "not rescored, no stored evidence (recorded before evidence was kept, or unreadable): %s\n", strings.Join(r.NoEvidence, ", "))
	}
	if len(d.Turns) == 0 {
		fmt.Fprintln(w, "no turn changed")
	} else {
		tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
		fmt.Fprintln(tw, "TASK\tOLD\tNEW\tCHANGED CHECKS\tTAGS GAINED\tTAGS LOST")
		for _, t := range d.Turns {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Label, num(t.Old), num(t.New), list(t.ChangedChecks),
				list(t.TagsGained), list(t.TagsLost))
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "turns changed %d, mean score %.3f -> %.3f, verdict %s -> %s\n", d.Summary.TurnsChanged,
		r.MeanFrom, r.MeanTo, d.Summary.VerdictFrom, d.Summary.VerdictTo)
	if len(d.Summary.GatesChanged) > 0 {
		fmt.Fprintf(w, "gates changed: %s\n", strings.Join(d.Summary.GatesChanged, ", "))
	}
}

// printDrift prints a drift banner: one line per drift unit that differs.
func printDrift(w io.Writer, indent string, ds []verify.Drift) {
	for _, d := range ds {
		fmt.Fprintf(w, "%s%s\n", indent, d)
	}
}

func list(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}
