package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/verify"
)

func (a *app) compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "compare two recorded runs of a pack task by task",
		ArgsUsage: "A B",
		UsageText: `assay compare A B --pack P [--db URL] [--format text|json]

A and B are candidate IDs (each its latest run of the pack) or run IDs. Prints
a per-task table (turn score A, B, delta, checks that differ), the two
summaries side by side and the tasks that got better and worse, largest change
first. When the two runs differ in a drift unit (pack, scorer, policy or skill
version) a drift banner names each (docs/evidence.md).

Example:
   assay compare candidate-a candidate-b --pack packs/example.yaml`,
		Flags: []cli.Flag{
			packFlag(),
			formatFlag(),
		},
		Action: a.compare,
	}
}

func (a *app) compare(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	if c.NArg() != 2 {
		return invalidf("give two runs to compare: assay compare A B --pack P")
	}
	s, err := a.openSession(c, c.String("pack"), true, false)
	if err != nil {
		return err
	}
	defer s.close()
	ref := verify.PackRef{Name: s.pack.Name(), Path: s.pack.Path, SHA256: s.pack.SHA256}
	cmp, err := verify.Compare(c.Context, s.rt.store, ref, c.Args().Get(0), c.Args().Get(1))
	if err != nil {
		return verifyErr(err)
	}
	if format == "json" {
		return printJSON(a.stdout, cmp)
	}
	printComparison(a.stdout, cmp)
	return nil
}

func printComparison(w io.Writer, r *verify.Comparison) {
	fmt.Fprintf(w, "pack %s (sha256 %s)\nA: %s (run %d)\nB: %s (run %d)\n", r.Pack.Name, short(r.Pack.SHA256),
		r.A.Candidate, r.A.RunID, r.B.Candidate, r.B.RunID)
	printDrift(w, "", r.Drift)
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tA\tB\tDELTA\tCHECKS THAT DIFFER")
	for _, t := range r.Tasks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%+.3f\t%s\n", t.Label, num(t.A), num(t.B), t.Delta, list(t.ChangedChecks))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	a, b := r.A.Summary, r.B.Summary
	fmt.Fprintln(tw, "\tA\tB")
	fmt.Fprintf(tw, "mean score\t%.3f\t%.3f\n", a.MeanScore, b.MeanScore)
	fmt.Fprintf(tw, "finalize rate\t%.3f\t%.3f\n", a.FinalizeRate, b.FinalizeRate)
	fmt.Fprintf(tw, "error rate\t%.3f\t%.3f\n", a.ErrorRate, b.ErrorRate)
	fmt.Fprintf(tw, "mean latency\t%s\t%s\n", secs(a.MeanLatencyS), secs(b.MeanLatencyS))
	fmt.Fprintf(tw, "mean tool calls\t%.3f\t%.3f\n", a.MeanToolCalls, b.MeanToolCalls)
	fmt.Fprintf(tw, "mean cost\t%s\t%s\n", usd(a.MeanCostUSD), usd(b.MeanCostUSD))
	fmt.Fprintf(tw, "unscored / missing\t%d / %d\t%d / %d\n", a.Unscored, a.Missing, b.Unscored, b.Missing)
	fmt.Fprintf(tw, "eligible\t%t\t%t\n", a.Eligible, b.Eligible)
	fmt.Fprintf(tw, "verdict\t%s\t%s\n", r.A.Verdict, r.B.Verdict)
	tw.Flush()
	printMoves(w, "better", r.Better)
	printMoves(w, "worse", r.Worse)
}

func printMoves(w io.Writer, what string, ts []verify.CompareTask) {
	if len(ts) == 0 {
		fmt.Fprintf(w, "\n%s: none\n", what)
		return
	}
	fmt.Fprintf(w, "\n%s:\n", what)
	for _, t := range ts {
		fmt.Fprintf(w, "  %s %+.3f\n", t.Label, t.Delta)
	}
}
