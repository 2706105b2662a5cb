package cli

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/pkg/diag"
)

// Usage errors: every mistake on the command line (an unknown command or
// flag, a flag without its value or with a malformed one, a required flag not
// given, arguments a command does not take) is exit 2 with one line naming
// the command and its --help, never the whole help text (docs/cli.md).

// wireUsage makes every command of the tree under cmds (named from path, e.g.
// "assay pack") report its usage errors as invalid input: urfave/cli gives
// each command its own OnUsageError, and without one it prints the whole
// help and returns an error that would exit 3.
func wireUsage(path string, cmds []*cli.Command) {
	for _, c := range cmds {
		name := path + " " + c.Name
		// No help subcommand: urfave/cli's is one package-level *Command
		// that each use writes to; "help" is rewritten to --help (helpArgs).
		c.HideHelpCommand = true
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return usageErr(name, c.Flags, err)
		}
		requireFlags(name, c)
		if len(c.Subcommands) > 0 {
			if c.Action == nil {
				c.Action = unknownCommand(name, c.Subcommands)
			}
			wireUsage(name, c.Subcommands)
		}
	}
}

// requireFlags checks c's required flags itself, before its action:
// urfave/cli prints the whole help above a missing required flag.
func requireFlags(name string, c *cli.Command) {
	var required []string
	for _, f := range c.Flags {
		if sf, ok := f.(*cli.StringFlag); ok && sf.Required {
			sf.Required = false
			required = append(required, sf.Name)
		}
	}
	if len(required) == 0 || c.Action == nil {
		return
	}
	action := c.Action
	c.Action = func(ctx *cli.Context) error {
		var missing []string
		for _, r := range required {
			if !ctx.IsSet(r) {
				missing = append(missing, "--"+r)
			}
		}
		switch len(missing) {
		case 0:
			return action(ctx)
		case 1:
			return invalidf("%s%s is required (see %s --help)", subject(name), missing[0], name)
		}
		return invalidf("%s%s are required (see %s --help)", subject(name), strings.Join(missing, ", "), name)
	}
}

// takesNoArgs makes c refuse positional arguments: a command that takes
// none would otherwise ignore a mistyped flag value or a stray word.
func takesNoArgs(c *cli.Command) *cli.Command {
	action := c.Action
	c.Action = func(ctx *cli.Context) error {
		if ctx.NArg() > 0 {
			name := "assay " + c.Name
			return invalidf("%stakes no arguments, got %q (see %s --help)", subject(name), ctx.Args().Slice(), name)
		}
		return action(ctx)
	}
	return c
}

// unknownCommand is the action of a command that only holds subcommands
// (the root included): with no argument it shows its help, with one it does
// not know it names the commands it has.
func unknownCommand(name string, cmds []*cli.Command) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() == 0 {
			return cli.ShowSubcommandHelp(c)
		}
		arg := c.Args().First()
		names := make([]string, 0, len(cmds))
		for _, sc := range cmds {
			if !sc.Hidden {
				names = append(names, sc.Name)
			}
		}
		what := "command"
		if strings.HasPrefix(arg, "-") {
			what = "flag"
		}
		return invalidf("%sunknown %s %q%s (commands: %s; see %s --help)",
			subject(name), what, arg, closest(arg, names), strings.Join(names, ", "), name)
	}
}

// goFlagName is a flag as the standard flag package prints it in an error
// ("-pack"); assay's flags are spelled with two dashes.
var goFlagName = regexp.MustCompile(`(^|[ :])-([A-Za-z][A-Za-z0-9_-]+)`)

// usageErr rewrites a flag-parsing error of command name (whose flags are
// flags) as one line for a person: the flag spelled as it is typed, the
// nearest flag when one is unknown, and where to read more.
func usageErr(name string, flags []cli.Flag, err error) error {
	msg := goFlagName.ReplaceAllString(err.Error(), "$1--$2")
	hint := ""
	if flag, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		var names []string
		for _, f := range flags {
			for _, n := range f.Names() {
				if len(n) > 1 {
					names = append(names, "--"+n)
				}
			}
		}
		msg, hint = "unknown flag "+flag, closest(flag, names)
	} else if flag, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		msg = "flag " + flag + " needs a value"
	}
	return invalidf("%s%s%s (see %s --help)", subject(name), msg, hint, name)
}

// subject starts the message of a usage error of command name ("assay
// pack validate"): "pack validate: ", or nothing for assay itself (Main
// prints "assay: " before every message).
func subject(name string) string {
	if sub, ok := strings.CutPrefix(name, "assay "); ok {
		return sub + ": "
	}
	return ""
}

// closest suggests the name nearest to s (at most two edits away), or
// returns "".
func closest(s string, names []string) string {
	best, bestDist := "", 3
	for _, n := range names {
		if d := diag.EditDistance(s, n); d < bestDist && d < len(n) {
			best, bestDist = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %s?", best)
}
