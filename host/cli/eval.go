package cli

import "github.com/urfave/cli/v2"

// PLACEHOLDER: replaced by the command's real implementation.
func (a *app) evalCommand() *cli.Command {
	return &cli.Command{Name: "eval", Action: func(c *cli.Context) error { return hostErr(errNotBuilt) }}
}
