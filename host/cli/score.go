package cli

import "github.com/urfave/cli/v2"

// PLACEHOLDER: replaced by the command's real implementation.
func (a *app) scoreCommand() *cli.Command {
	return &cli.Command{Name: "score", Action: func(c *cli.Context) error { return hostErr(errNotBuilt) }}
}
