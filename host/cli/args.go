package cli

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed moves the flags that follow a command's positional arguments
// in front of them, so `assay eval FILE.json --format json` works as
// `assay eval --format json FILE.json` does (urfave/cli stops reading flags
// at the first argument). A flag that takes a value keeps it; "--" ends the
// flags, and everything after it stays an argument.
func interspersed(app *cli.App, args []string) []string {
	cmds := app.Commands
	flags := app.Flags
	i := 0
	// Walk the global flags and the command path.
	for i < len(args) {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			i += flagWidth(flags, a, args[i+1:])
			continue
		}
		c := findCommand(cmds, a)
		if c == nil {
			break
		}
		cmds, flags = c.Subcommands, c.Flags
		i++
		if len(cmds) == 0 {
			break
		}
	}
	if len(flags) == len(app.Flags) && i == 0 || i > len(args) {
		return args
	}
	head := append([]string(nil), args[:i]...)
	var fl, pos []string
	for j := i; j < len(args); j++ {
		a := args[j]
		if a == "--" {
			pos = append(pos, args[j:]...)
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			if j == len(args)-1 && takesValue(flags, a) {
				pos = append(pos, a) // its value is missing: left for the command to report
				break
			}
			w := flagWidth(flags, a, args[j+1:])
			fl = append(fl, args[j:j+w]...)
			j += w - 1
			continue
		}
		pos = append(pos, a)
	}
	return append(append(head, fl...), pos...)
}

// flagWidth is how many tokens flag token a takes: 2 when it names a flag
// that takes a value given as the next token, else 1.
func flagWidth(flags []cli.Flag, a string, rest []string) int {
	name := strings.TrimLeft(a, "-")
	if strings.Contains(name, "=") || len(rest) == 0 {
		return 1
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			if _, isBool := f.(*cli.BoolFlag); isBool {
				return 1
			}
			return 2
		}
	}
	return 1
}

// takesValue reports whether flag token a names a flag that needs a value
// and does not carry it (--name=value).
func takesValue(flags []cli.Flag, a string) bool {
	return !strings.Contains(a, "=") && flagWidth(flags, a, []string{""}) == 2
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
