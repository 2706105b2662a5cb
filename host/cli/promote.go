package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/governance"
)

func (a *app) promoteCommand() *cli.Command {
	return &cli.Command{
		Name:  "promote",
		Usage: "record a person's promotion of a candidate, only when every interlock is green",
		UsageText: `assay promote --pack P --candidate C --approved-by NAME [--baseline B] [--reason TEXT] [--format text|json]

Checks every interlock: the candidate's latest run passed every gate; the
latest scoring.promotion.shadow_runs runs with the same drift units all passed
them; with require_no_regression, no regression against the baseline; no fired
kill criterion; no suspect or nondeterministic scorer; no drift from the
baseline. When all are green it writes a promotion record; otherwise it records
nothing and exits 1 listing each red one. There is no way to skip one
(docs/governance.md).

Example:
   assay promote --pack packs/example.yaml --candidate candidate-c --baseline candidate-a --approved-by ana --reason "Q3 rollout"`,
		Flags: []cli.Flag{
			packFlag(),
			&cli.StringFlag{Name: "candidate", Required: true, Usage: "candidate `ID` to promote"},
			&cli.StringFlag{Name: "approved-by", Required: true, Usage: "the person approving the promotion"},
			&cli.StringFlag{Name: "baseline", Usage: "candidate `ID` it replaces"},
			&cli.StringFlag{Name: "reason", Usage: "why"},
			formatFlag(),
		},
		Action: a.promote,
	}
}

func (a *app) promote(c *cli.Context) error {
	format, g, err := a.openGovFormat(c)
	if err != nil {
		return err
	}
	defer g.close()
	pr, err := governance.Promote(c.Context, g.st, governance.PromoteRequest{Pack: g.pack, Candidate: c.String("candidate"),
		Baseline: c.String("baseline"), ApprovedBy: c.String("approved-by"), Reason: c.String("reason")})
	var refused *governance.RefusedError
	switch {
	case errors.As(err, &refused):
		if format == "json" {
			if err := printJSON(a.stdout, map[string]any{"promoted": false, "interlocks": refused.Interlocks}); err != nil {
				return err
			}
		} else {
			printInterlocks(a, refused.Interlocks)
		}
		return &ExitError{Code: ExitGate, Err: fmt.Errorf("promotion of %s refused: %d interlocks red:\n  %s",
			c.String("candidate"), len(refused.Red), strings.Join(refused.Red, "\n  "))}
	case err != nil:
		return govInvalid(err)
	}
	if format == "json" {
		return printJSON(a.stdout, pr)
	}
	printInterlocks(a, pr.Interlocks)
	fmt.Fprintf(a.stdout, "promotion %d recorded: %s approved by %s, resting on runs %v, scorer version %s, rollback on %v\n",
		pr.ID, pr.Candidate, pr.ApprovedBy, pr.Runs, short(pr.ScorerVersion), pr.RollbackOn)
	return nil
}

func printInterlocks(a *app, ls map[string]governance.Interlock) {
	for _, n := range governance.InterlockNames() {
		state := "green"
		if !ls[n].OK {
			state = "RED  "
		}
		fmt.Fprintf(a.stdout, "  %s %-18s %s\n", state, n, ls[n].Detail)
	}
}

func (a *app) promotionsCommand() *cli.Command {
	return &cli.Command{
		Name:      "promotions",
		Usage:     "promotion records",
		UsageText: "assay promotions list [--pack P] [--format text|json]\n\nExample:\n   assay promotions list --pack packs/example.yaml",
		Subcommands: []*cli.Command{takesNoArgs(&cli.Command{
			Name:      "list",
			Usage:     "every promotion record, oldest first",
			UsageText: "assay promotions list [--pack P] [--format text|json]\n\nExample:\n   assay promotions list --format json",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "pack", Usage: "only this eval pack `FILE`'s"}, formatFlag()},
			Action:    a.promotionsList,
		})},
	}
}

func (a *app) promotionsList(c *cli.Context) error {
	format, g, err := a.openGovFormat(c)
	if err != nil {
		return err
	}
	defer g.close()
	list, err := governance.Promotions(c.Context, g.st, g.packSHA())
	if err != nil {
		return hostErr(err)
	}
	if format == "json" {
		return printJSON(a.stdout, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(a.stdout, "no promotions recorded")
	}
	for _, p := range list {
		fmt.Fprintf(a.stdout, "%d  %s  %s (baseline %s) approved by %s: %s; runs %v; scorer version %s; rollback on %v\n",
			p.ID, p.CreatedAt.Format("2006-01-02 15:04"), p.Candidate, orDash(p.Baseline), p.ApprovedBy, p.Reason, p.Runs, short(p.ScorerVersion), p.RollbackOn)
	}
	return nil
}
