package cli

import (
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/store"
)

func (a *app) tokensCommand() *cli.Command {
	return &cli.Command{
		Name:  "tokens",
		Usage: "API tokens of assay serve: create, list, revoke",
		UsageText: "assay tokens create --company ID [--name N] | list | revoke ID\n\n" +
			"A token signs in to assay serve's API and cockpit for one company (docs/serve.md).\n\n" +
			"Example:\n   assay tokens create --company acme --name ci\n   assay tokens revoke 3",
		Subcommands: []*cli.Command{
			takesNoArgs(&cli.Command{
				Name:  "create",
				Usage: "create a token for a company; the token is printed once, alone on stdout's first line",
				UsageText: "assay tokens create --company ID [--name N]\n\n" +
					"Only the token's sha256 is stored: save the printed token now.\n\n" +
					"Example:\n   assay tokens create --company acme --name ci",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "company", Required: true, Usage: "company `ID` (a pack's company.id)"},
					&cli.StringFlag{Name: "name", Usage: "a `NAME` to recognise the token by"},
				},
				Action: a.tokensCreate,
			}),
			takesNoArgs(&cli.Command{
				Name:      "list",
				Usage:     "list tokens (never their secrets)",
				UsageText: "assay tokens list [--format text|json]\n\nExample:\n   assay tokens list",
				Flags:     []cli.Flag{formatFlag()},
				Action:    a.tokensList,
			}),
			{
				Name:      "revoke",
				Usage:     "revoke a token by id: it is refused from then on (401)",
				UsageText: "assay tokens revoke ID\n\nExample:\n   assay tokens revoke 3",
				Action:    a.tokensRevoke,
			},
		},
	}
}

func (a *app) tokensCreate(c *cli.Context) error {
	rt, err := a.startup(c, true)
	if err != nil {
		return err
	}
	defer rt.close()
	secret, t, err := rt.store.CreateToken(c.Context, c.String("company"), c.String("name"))
	if err != nil {
		return hostErr(err)
	}
	fmt.Fprintln(a.stdout, secret)
	fmt.Fprintf(a.stderr, "token %d for company %s created; it is shown only now (only its sha256 is stored)\n", t.ID, t.Company)
	return nil
}

type tokenJSON struct {
	ID        int64      `json:"id"`
	Company   string     `json:"company"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

func (a *app) tokensList(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	rt, err := a.startup(c, true)
	if err != nil {
		return err
	}
	defer rt.close()
	ts, err := rt.store.Tokens(c.Context)
	if err != nil {
		return hostErr(err)
	}
	if format == "json" {
		out := make([]tokenJSON, len(ts))
		for i, t := range ts {
			out[i] = tokenJSON(t)
		}
		return printJSON(a.stdout, out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCOMPANY\tNAME\tCREATED\tREVOKED")
	for _, t := range ts {
		revoked := "-"
		if t.RevokedAt != nil {
			revoked = t.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", t.ID, t.Company, t.Name, t.CreatedAt.Format(time.RFC3339), revoked)
	}
	return tw.Flush()
}

func (a *app) tokensRevoke(c *cli.Context) error {
	if c.NArg() != 1 {
		return invalidf("tokens revoke: give one token ID")
	}
	id, err := strconv.ParseInt(c.Args().First(), 10, 64)
	if err != nil {
		return invalidf("tokens revoke: token ID %q: want a number", c.Args().First())
	}
	rt, err := a.startup(c, true)
	if err != nil {
		return err
	}
	defer rt.close()
	if err := rt.store.RevokeToken(c.Context, id); errors.Is(err, store.ErrNotFound) {
		return invalidf("tokens revoke: no token %d", id)
	} else if err != nil {
		return hostErr(err)
	}
	fmt.Fprintf(a.stderr, "token %d revoked\n", id)
	return nil
}
