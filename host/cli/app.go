package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/urfave/cli/v2"
)

// Global flag names; each also reads an environment variable.
const (
	flagPluginDir = "plugin-dir"
	flagDB        = "db"
	flagSchema    = "schema"
	flagFormat    = "format"
)

// Main runs assay with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr}
	if path := os.Getenv("ASSAY_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			defer f.Close()
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	app := a.cliApp()
	err := app.RunContext(ctx, append([]string{"assay"}, interspersed(app, args)...))
	if isUsageError(err) {
		err = invalid(err)
	}
	code, show := exitCode(err)
	if show {
		msg := err.Error()
		if !strings.HasSuffix(msg, "\n") {
			msg += "\n"
		}
		fmt.Fprintf(stderr, "assay: %s", msg)
	}
	return code
}

// app holds what every command shares.
type app struct {
	stdout, stderr io.Writer
}

func (a *app) cliApp() *cli.App {
	return &cli.App{
		Name:      "assay",
		Usage:     "deterministic, attributable verification of agent evaluation runs",
		Writer:    a.stdout,
		ErrWriter: a.stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: flagPluginDir, Value: "bin/plugins", EnvVars: []string{"ASSAY_PLUGIN_DIR"},
				Usage: "directory holding the plugin `DIR`/manifest.json and the scorer binaries"},
			&cli.StringFlag{Name: flagDB, Value: "assay.db", EnvVars: []string{"ASSAY_DB"},
				Usage: "database: a SQLite file `PATH` or a postgres:// URL"},
			&cli.StringFlag{Name: flagSchema, EnvVars: []string{"ASSAY_SCHEMA"},
				Usage: "pack JSON schema `FILE` to use instead of the embedded one"},
		},
		Commands: []*cli.Command{
			a.versionCommand(),
			a.packCommand(),
			a.pluginsCommand(),
			a.scorersCommand(),
			a.doctorCommand(),
			a.verifyCommand(),
			a.frontierCommand(),
			a.scoreCommand(),
			a.celCommand(),
			a.stateCommand(),
			a.evalCommand(),
			a.taskEvalCommand(),
		},
		// Usage errors (unknown flag, missing argument) are invalid input.
		OnUsageError: func(c *cli.Context, err error, isSubcommand bool) error {
			return invalid(err)
		},
		ExitErrHandler:  func(c *cli.Context, err error) {},
		HideHelpCommand: true,
	}
}

// formatFlag is the --format flag shared by commands that can print JSON.
func formatFlag() cli.Flag {
	return &cli.StringFlag{Name: flagFormat, Value: "text", Usage: "output `FORMAT`: text or json"}
}

// outputFormat reads and checks --format.
func outputFormat(c *cli.Context) (string, error) {
	f := c.String(flagFormat)
	if f != "text" && f != "json" {
		return "", invalidf("--format: want text or json, got %q", f)
	}
	return f, nil
}

// isUsageError reports whether err is urfave/cli's complaint about the
// command line that does not pass through OnUsageError (a required flag not
// set, an unknown command): invalid input, exit 2.
func isUsageError(err error) bool {
	var ee *ExitError
	if err == nil || errors.As(err, &ee) {
		return false
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "Required flag") || strings.HasPrefix(msg, "Required flags") ||
		strings.HasPrefix(msg, "flag provided but not defined") || strings.Contains(msg, "No help topic for")
}
