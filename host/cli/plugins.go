package cli

import "github.com/urfave/cli/v2"

// PLACEHOLDER: replaced by the command's real implementation.
func (a *app) pluginsCommand() *cli.Command {
	return &cli.Command{Name: "plugins", Action: func(c *cli.Context) error { return hostErr(errNotBuilt) }}
}
