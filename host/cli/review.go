package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/governance"
)

func (a *app) reviewCommand() *cli.Command {
	optionalPack := func() cli.Flag { return &cli.StringFlag{Name: "pack", Usage: "eval pack `FILE`"} }
	return &cli.Command{
		Name:  "review",
		Usage: "sampled human review of stored turns and each scorer's override rate",
		UsageText: "assay review sample | list | record | stats\n\n" +
			"Sample stored turns, review them, and see each scorer's override rate (docs/governance.md).\n\n" +
			"Example:\n   assay review sample --pack packs/example.yaml --candidate candidate-a --n 10\n" +
			"   assay review record 42 --reviewer ana --agree --reason \"the answer is grounded\"",
		Subcommands: []*cli.Command{
			takesNoArgs(&cli.Command{
				Name:  "sample",
				Usage: "pick turns of a candidate's latest run to review and queue them",
				UsageText: `assay review sample --pack P --candidate C [--n 20] [--seed S] [--strategy stratified|failed|random] [--format text|json]

stratified (the default) takes turns from each (scorer, pass/fail) stratum in
turn; failed only failed turns; random any. The same seed gives the same
sample. Unscored and missing turns have no score to review and are not drawn.

Example:
   assay review sample --pack packs/example.yaml --candidate candidate-a --n 10 --seed 1`,
				Flags: []cli.Flag{packFlag(),
					&cli.StringFlag{Name: "candidate", Required: true, Usage: "candidate `ID`"},
					&cli.IntFlag{Name: "n", Value: 20, Usage: "turns to sample"},
					&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "sampling seed"},
					&cli.StringFlag{Name: "strategy", Value: governance.StrategyStratified, Usage: "stratified, failed or random"},
					formatFlag()},
				Action: a.reviewSample,
			}),
			takesNoArgs(&cli.Command{
				Name:      "list",
				Usage:     "the open review queue: each turn's answer, checks and evidence",
				UsageText: "assay review list [--pack P] [--format text|json]\n\nExample:\n   assay review list --pack packs/example.yaml",
				Flags:     []cli.Flag{optionalPack(), formatFlag()},
				Action:    a.reviewList,
			}),
			{
				Name:  "record",
				Usage: "record a review of a stored turn: agree, or override stating the correct verdict",
				UsageText: `assay review record TURN_ID --reviewer NAME (--agree | --override --correct pass|fail [--correct-score X]) --reason TEXT

The review is attributed to the scorer {id, version, sha256} that produced the
turn's score. An override without --correct, a blank reviewer or reason, or an
unknown turn is exit 2.

Example:
   assay review record 42 --reviewer ana --override --correct pass --reason "the task was created"`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "reviewer", Required: true, Usage: "who reviewed the turn"},
					&cli.BoolFlag{Name: "agree", Usage: "the score is right"},
					&cli.BoolFlag{Name: "override", Usage: "the score is wrong (give --correct)"},
					&cli.StringFlag{Name: "correct", Usage: "the correct verdict: pass or fail"},
					&cli.Float64Flag{Name: "correct-score", Usage: "the correct turn score, in [0, 1]"},
					&cli.StringFlag{Name: "reason", Required: true, Usage: "why"},
				},
				Action: a.reviewRecord,
			},
			takesNoArgs(&cli.Command{
				Name:  "stats",
				Usage: "per scorer version: reviews, overrides, override rate, Wilson 95% interval, status",
				UsageText: `assay review stats [--pack P] [--format text|json]

status is suspect at an override rate of governance.suspect_rate (default 0.20)
or more over at least governance.min_reviews (default 5) reviews, unreviewed
below min_reviews, ok otherwise (docs/governance.md).

Example:
   assay review stats --pack packs/example.yaml --format json`,
				Flags:  []cli.Flag{optionalPack(), formatFlag()},
				Action: a.reviewStats,
			}),
		},
	}
}

func (a *app) reviewSample(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	if c.Int("n") < 1 {
		return invalidf("review sample: --n must be at least 1")
	}
	g, err := a.openGov(c)
	if err != nil {
		return err
	}
	defer g.close()
	picked, err := governance.SampleQueue(c.Context, g.st, governance.SampleRequest{Pack: g.pack, Candidate: c.String("candidate"),
		N: c.Int("n"), Seed: c.Uint64("seed"), Strategy: c.String("strategy")})
	if err != nil {
		return govInvalid(err)
	}
	if format == "json" {
		return printJSON(a.stdout, picked)
	}
	fmt.Fprintf(a.stdout, "queued %d turns of %s for review (strategy %s, seed %d)\n", len(picked), c.String("candidate"), c.String("strategy"), c.Uint64("seed"))
	tw := tabwriter.NewWriter(a.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  TURN\tLABEL\tSCORER\tTURN SCORE")
	for _, p := range picked {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%.3f\n", p.TurnID, p.Label, p.Scorer, p.TurnScore)
	}
	return tw.Flush()
}

func (a *app) reviewList(c *cli.Context) error {
	format, g, err := a.openGovFormat(c)
	if err != nil {
		return err
	}
	defer g.close()
	open, err := governance.OpenQueue(c.Context, g.st, g.packSHA())
	if err != nil {
		return hostErr(err)
	}
	if format == "json" {
		return printJSON(a.stdout, open)
	}
	fmt.Fprintf(a.stdout, "%d turns waiting for review\n", len(open))
	for _, t := range open {
		score := "none"
		if t.TurnScore != nil {
			score = fmt.Sprintf("%.3f", *t.TurnScore)
		}
		fmt.Fprintf(a.stdout, "\nturn %d  candidate %s  task %s  score %s  scorer %s v%s (sha256 %s)\n",
			t.TurnID, t.Candidate, t.Label, score, t.Scorer.ID, t.Scorer.Version, short(t.Scorer.SHA256))
		if t.AnswerNote != "" {
			fmt.Fprintf(a.stdout, "  answer: (%s)\n", t.AnswerNote)
		} else {
			fmt.Fprintf(a.stdout, "  answer: %s\n", strings.ReplaceAll(t.Answer, "\n", "\n          "))
		}
		for _, ch := range t.Checks {
			fmt.Fprintf(a.stdout, "  check %-24s %.3f %s\n", ch.Name, ch.Score, ch.Detail)
		}
		fmt.Fprintf(a.stdout, "  evidence: trace %s, state before %s, after %s\n",
			orDash(short(t.Evidence["trace"])), orDash(short(t.Evidence["state_before"])), orDash(short(t.Evidence["state_after"])))
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a *app) reviewRecord(c *cli.Context) error {
	id, err := parseTurnID(c)
	if err != nil {
		return err
	}
	r := governance.Review{TurnID: id, Reviewer: c.String("reviewer"), Reason: c.String("reason"), Correct: c.String("correct")}
	switch {
	case c.Bool("agree") == c.Bool("override"):
		return invalidf("review record: give exactly one of --agree and --override (see assay review record --help)")
	case c.Bool("agree"):
		r.Verdict = governance.VerdictAgree
	default:
		r.Verdict = governance.VerdictOverride
		if !c.IsSet("correct") {
			return invalidf("review record: --override needs --correct pass|fail: an override states the correct verdict")
		}
	}
	if c.IsSet("correct-score") {
		x := c.Float64("correct-score")
		if x < 0 || x > 1 {
			return invalidf("review record: --correct-score %g is not in [0, 1]", x)
		}
		r.CorrectScore = &x
	}
	g, err := a.openGov(c)
	if err != nil {
		return err
	}
	defer g.close()
	got, err := governance.RecordReview(c.Context, g.st, r)
	if err != nil {
		return govInvalid(err)
	}
	fmt.Fprintf(a.stdout, "review %d recorded: turn %d (%s, task %s) %s by %s, attributed to scorer %s v%s (sha256 %s)\n",
		got.ID, got.TurnID, got.Candidate, got.Label, got.Verdict, got.Reviewer, got.Scorer.ID, got.Scorer.Version, short(got.Scorer.SHA256))
	return nil
}

func (a *app) reviewStats(c *cli.Context) error {
	format, g, err := a.openGovFormat(c)
	if err != nil {
		return err
	}
	defer g.close()
	stats, err := governance.Stats(c.Context, g.st, g.packSHA(), governance.PackThresholds(g.pack))
	if err != nil {
		return hostErr(err)
	}
	if format == "json" {
		return printJSON(a.stdout, stats)
	}
	tw := tabwriter.NewWriter(a.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCORER\tVERSION\tSHA256\tREVIEWS\tOVERRIDES\tRATE\tWILSON 95%\tSTATUS")
	for _, s := range stats {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%.3f\t[%.3f, %.3f]\t%s\n", s.Scorer, s.Version, short(s.SHA256), s.Reviews, s.Overrides,
			s.OverrideRate, s.CI95[0], s.CI95[1], s.Status)
	}
	if len(stats) == 0 {
		fmt.Fprintln(tw, "(no reviews recorded)")
	}
	return tw.Flush()
}
