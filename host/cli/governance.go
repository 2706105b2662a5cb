package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/governance"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
)

// govEnv is what a governance command works with: the database and, when
// --pack was given, the pack.
type govEnv struct {
	st    *store.Store
	pack  *pack.Pack
	close func()
}

// packSHA is the pack's sha256, or empty (every pack) without --pack.
func (g *govEnv) packSHA() string {
	if g.pack == nil {
		return ""
	}
	return g.pack.SHA256
}

// openGov opens the database, and loads --pack when it is given.
func (a *app) openGov(c *cli.Context) (*govEnv, error) {
	if c.String("pack") != "" {
		s, err := a.openSession(c, c.String("pack"), true, false)
		if err != nil {
			return nil, err
		}
		return &govEnv{st: s.rt.store, pack: s.pack, close: s.close}, nil
	}
	rt, err := a.startup(c, true)
	if err != nil {
		return nil, err
	}
	return &govEnv{st: rt.store, close: func() { rt.close() }}, nil
}

// openGovFormat reads --format, then opens what the command works with.
func (a *app) openGovFormat(c *cli.Context) (string, *govEnv, error) {
	format, err := outputFormat(c)
	if err != nil {
		return "", nil, err
	}
	g, err := a.openGov(c)
	return format, g, err
}

// printFired prints the fired kill criteria under a verify or a check.
func printFired(w io.Writer, fired []verify.FiredCriterion) {
	for _, f := range fired {
		if !f.Fired {
			fmt.Fprintf(w, "KILL CRITERION %s could not be evaluated: %s\n", f.Name, f.Error)
			continue
		}
		state := "fired before and not cleared"
		if f.New {
			state = "FIRED now"
		}
		fmt.Fprintf(w, "KILL CRITERION %s %s (candidate %s, run %d): %s\n  clear it with: assay governance clear %s --pack P --by NAME --reason TEXT\n",
			f.Name, state, f.Candidate, f.RunID, f.Message, f.Name)
	}
}

// govInvalid makes the mistakes of a person recording a review, clear or
// promotion exit 2; anything else is the host's.
func govInvalid(err error) error {
	for _, e := range []error{governance.ErrUnknownTurn, governance.ErrMissingCorrect, governance.ErrBlankReason,
		governance.ErrBlankReviewer, governance.ErrBadVerdict, governance.ErrBadCorrect, governance.ErrAgreeCorrect,
		governance.ErrNotFired, governance.ErrBlankClear, governance.ErrNoApprover, store.ErrNotFound} {
		if errors.Is(err, e) {
			return invalid(err)
		}
	}
	return hostErr(err)
}

func (a *app) governanceCommand() *cli.Command {
	return &cli.Command{
		Name:  "governance",
		Usage: "kill criteria: evaluate them, clear a fired one",
		UsageText: "assay governance check --pack P | clear NAME --pack P --by NAME --reason TEXT\n\n" +
			"Example:\n   assay governance check --pack packs/example.yaml",
		Subcommands: []*cli.Command{
			takesNoArgs(&cli.Command{
				Name:  "check",
				Usage: "evaluate the pack's kill criteria over run history; exit 1 when any has fired",
				UsageText: `assay governance check --pack P [--format text|json]

Evaluates every kill_criteria expression of the pack over each candidate's run
history and the scorers' review and probe state. A criterion that is true is
recorded as fired, once, with the run that fired it, and stays fired until
assay governance clear. Firing changes nothing else (docs/governance.md).

Example:
   assay governance check --pack packs/example.yaml --format json`,
				Flags:  []cli.Flag{packFlag(), formatFlag()},
				Action: a.governanceCheck,
			}),
			{
				Name:  "clear",
				Usage: "clear a fired kill criterion, recording who and why",
				UsageText: `assay governance clear NAME --pack P --by NAME --reason TEXT

Example:
   assay governance clear score_drop --pack packs/example.yaml --by ana --reason "scorer fixed in 1.2.1"`,
				Flags: []cli.Flag{
					packFlag(),
					&cli.StringFlag{Name: "by", Required: true, Usage: "who clears it"},
					&cli.StringFlag{Name: "reason", Required: true, Usage: "why it may be cleared"},
				},
				Action: a.governanceClear,
			},
		},
	}
}

func (a *app) governanceCheck(c *cli.Context) error {
	format, g, err := a.openGovFormat(c)
	if err != nil {
		return err
	}
	defer g.close()
	states, err := governance.CheckKill(c.Context, g.st, g.pack, nil)
	if err != nil {
		return hostErr(err)
	}
	fired, failed := 0, 0
	for _, s := range states {
		if s.Fired {
			fired++
		} else if s.Error != "" {
			failed++
		}
	}
	if format == "json" {
		if err := printJSON(a.stdout, states); err != nil {
			return err
		}
	} else {
		if len(states) == 0 {
			fmt.Fprintln(a.stdout, "the pack declares no kill criteria")
		}
		for _, s := range states {
			if !s.Fired && s.Error != "" {
				fmt.Fprintf(a.stdout, "ERROR %s could not be evaluated: %s\n", s.Name, s.Error)
			} else if s.Fired {
				fmt.Fprintf(a.stdout, "FIRED %s (candidate %s, run %d, at %s): %s\n", s.Name, s.Candidate, s.RunID, s.FiredAt.Format("2006-01-02 15:04:05Z"), s.Message)
			} else {
				fmt.Fprintf(a.stdout, "ok    %s\n", s.Name)
			}
		}
	}
	if fired > 0 {
		return &ExitError{Code: ExitGate, Err: fmt.Errorf("%d kill criteria fired", fired)}
	}
	if failed > 0 {
		return invalidf("%d kill criteria could not be evaluated", failed)
	}
	return nil
}

func (a *app) governanceClear(c *cli.Context) error {
	if c.NArg() != 1 {
		return invalidf("governance clear: want the criterion's NAME, got %d arguments (see assay governance clear --help)", c.NArg())
	}
	g, err := a.openGov(c)
	if err != nil {
		return err
	}
	defer g.close()
	name := c.Args().First()
	if err := governance.Clear(c.Context, g.st, g.pack.SHA256, name, c.String("by"), c.String("reason")); err != nil {
		return govInvalid(err)
	}
	fmt.Fprintf(a.stdout, "cleared kill criterion %s (by %s)\n", name, c.String("by"))
	return nil
}

// parseTurnID reads review record's TURN_ID.
func parseTurnID(c *cli.Context) (int64, error) {
	if c.NArg() != 1 {
		return 0, invalidf("review record: want one TURN_ID, got %d arguments (see assay review record --help)", c.NArg())
	}
	id, err := strconv.ParseInt(c.Args().First(), 10, 64)
	if err != nil || id < 1 {
		return 0, invalidf("review record: TURN_ID %q is not a turn id (assay review list shows them)", c.Args().First())
	}
	return id, nil
}
