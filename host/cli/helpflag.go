package cli

import (
	"flag"
	"sync"

	"github.com/urfave/cli/v2"
)

// helpFlag is --help/-h without state. urfave/cli appends its package-level
// cli.HelpFlag to every command, and a *cli.BoolFlag writes to itself when
// it is applied, so two Mains running at once in one process (the tests,
// `assay serve` later) would race on it. This flag only defines itself on
// the flag set.
type helpFlag struct{}

var (
	_ cli.Flag              = helpFlag{}
	_ cli.DocGenerationFlag = helpFlag{}
)

func (helpFlag) Apply(set *flag.FlagSet) error {
	set.Bool("help", false, "show help")
	set.Bool("h", false, "show help")
	return nil
}

func (helpFlag) Names() []string        { return []string{"help", "h"} }
func (helpFlag) IsSet() bool            { return false }
func (helpFlag) String() string         { return "--help, -h\tshow help" }
func (helpFlag) TakesValue() bool       { return false }
func (helpFlag) GetUsage() string       { return "show help" }
func (helpFlag) GetValue() string       { return "" }
func (helpFlag) GetDefaultText() string { return "" }
func (helpFlag) GetEnvVars() []string   { return nil }
func (helpFlag) IsVisible() bool        { return true }
func (helpFlag) GetCategory() string    { return "" }
func (helpFlag) IsRequired() bool       { return false }
func (helpFlag) IsDefaultVisible() bool { return false }

var useHelpFlag sync.Once

// statelessHelp puts helpFlag in place of urfave/cli's help flag, once per
// process.
func statelessHelp() { useHelpFlag.Do(func() { cli.HelpFlag = helpFlag{} }) }
