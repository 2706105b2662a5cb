package cli

import "github.com/urfave/cli/v2"

// PLACEHOLDER: replaced by the command's real implementation.
func (a *app) scorersCommand() *cli.Command {
	return &cli.Command{Name: "scorers", Action: func(c *cli.Context) error { return hostErr(errNotBuilt) }}
}
