package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/pkg/excerpt"
)

// dbOptions are the store.Open options the global flags give, and a note
// on stderr before an existing database is upgraded (it can take minutes).
func (a *app) dbOptions(c *cli.Context) []store.Option {
	db := store.Redact(c.String(flagDB))
	notice := func(migrations []string) {
		fmt.Fprintf(a.stderr, "note: upgrading the database %s to this assay's schema (%s); this runs once, and a large database can take minutes\n",
			excerpt.Escape(db), strings.Join(migrations, ", "))
	}
	return []store.Option{store.WithTimeout(c.Duration(flagDBTimeout)), store.WithUpgradeNotice(notice)}
}

// Global flag names; each also reads an environment variable.
const (
	flagPluginDir = "plugin-dir"
	flagDB        = "db"
	flagDBTimeout = "db-timeout"
	flagSchema    = "schema"
	flagFormat    = "format"
)

// Main runs assay with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	statelessHelp()
	a := &app{stdout: stdout, stderr: stderr}
	defer profile(stderr, "ASSAY_CPUPROFILE", pprof.StartCPUProfile, pprof.StopCPUProfile)()
	defer profile(stderr, "ASSAY_EXECTRACE", trace.Start, trace.Stop)()
	if path := os.Getenv("ASSAY_MEMPROFILE"); path != "" {
		defer heapProfiles(path)()
	}
	app := a.cliApp()
	err := app.RunContext(ctx, append([]string{"assay"}, interspersed(app, helpArgs(args))...))
	if isUsageError(err) {
		err = invalid(err)
	}
	code, show := exitCode(err)
	if show {
		msg := excerpt.Escape(err.Error()) // an error may quote an input: nothing raw reaches the terminal
		if !strings.HasSuffix(msg, "\n") {
			msg += "\n"
		}
		fmt.Fprintf(stderr, "assay: %s", msg)
	}
	return code
}

// heapProfiles writes the heap profile to path every second while the
// command runs, replacing the previous one, and once more when it ends: a
// file taken during the run shows its steady state (inuse_space, live
// objects at the last collection), the last one every allocation
// (alloc_space) (docs/performance.md). The returned func stops it.
// profile starts writing what start writes (a CPU profile, an execution
// trace) to the file the environment variable env names, for the whole
// command, and returns what stops it. A file that cannot be made, or a
// profile that cannot start (another one is running), is said on stderr,
// and the command runs without it.
func profile(stderr io.Writer, env string, start func(io.Writer) error, stop func()) func() {
	path := os.Getenv(env)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = start(f); err == nil {
			return func() {
				stop()
				f.Close()
			}
		}
		f.Close()
	}
	fmt.Fprintf(stderr, "assay: %s: %s; running without it\n", env, excerpt.Escape(err.Error()))
	return func() {}
}

func heapProfiles(path string) (stop func()) {
	write := func() {
		tmp := path + ".tmp"
		if f, err := os.Create(tmp); err == nil {
			err = pprof.WriteHeapProfile(f)
			if f.Close() == nil && err == nil {
				os.Rename(tmp, path)
			}
		}
	}
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				write()
			}
		}
	}()
	return func() {
		close(done)
		write() // what was allocated to the end (alloc_space), and is left
	}
}

// app holds what every command shares.
type app struct {
	stdout, stderr io.Writer
}

func (a *app) cliApp() *cli.App {
	app := &cli.App{
		Name:      "assay",
		Usage:     "deterministic, attributable verification of agent evaluation runs",
		Writer:    a.stdout,
		ErrWriter: a.stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: flagPluginDir, Value: "bin/plugins", EnvVars: []string{"ASSAY_PLUGIN_DIR"},
				Usage: "directory holding the plugin `DIR`/manifest.json and the scorer binaries"},
			&cli.StringFlag{Name: flagDB, Value: "assay.db", EnvVars: []string{"ASSAY_DB"},
				Usage: "database: a SQLite file `PATH` or a postgres:// URL"},
			&cli.DurationFlag{Name: flagDBTimeout, Value: store.DefaultTimeout, EnvVars: []string{"ASSAY_DB_TIMEOUT"},
				Usage: "Postgres connect, statement and idle-transaction `TIMEOUT` (0: none; docs/storage.md)"},
			&cli.StringFlag{Name: flagSchema, EnvVars: []string{"ASSAY_SCHEMA"},
				Usage: "pack JSON schema `FILE` to use instead of the embedded one"},
		},
		Commands: []*cli.Command{
			takesNoArgs(a.versionCommand()),
			a.packCommand(),
			a.pluginsCommand(),
			a.scorersCommand(),
			a.doctorCommand(),
			takesNoArgs(a.verifyCommand()),
			takesNoArgs(a.frontierCommand()),
			takesNoArgs(a.rescoreCommand()),
			a.compareCommand(),
			takesNoArgs(a.scoreCommand()),
			a.celCommand(),
			a.stateCommand(),
			a.evalCommand(),
			a.taskEvalCommand(),
			takesNoArgs(a.serveCommand()),
			a.tokensCommand(),
			takesNoArgs(a.reportCommand()),
			a.reviewCommand(),
			a.governanceCommand(),
			takesNoArgs(a.promoteCommand()),
			a.promotionsCommand(),
			takesNoArgs(a.workerCommand()),
			a.runsCommand(),
		},
		ExitErrHandler:  func(c *cli.Context, err error) {},
		HideHelpCommand: true,
	}
	app.Flags = append(app.Flags, pluginLimitFlags()...)
	// Usage errors (an unknown command or flag, a missing value) are
	// invalid input, exit 2, on one line (see usage.go).
	app.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return usageErr(app.Name, app.Flags, err)
	}
	app.Action = unknownCommand(app.Name, app.Commands)
	wireUsage(app.Name, app.Commands)
	return app
}

// helpArgs turns `assay help CMD...` into `assay CMD... --help`.
func helpArgs(args []string) []string {
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			break // only the command path: "assay plugins help register"
		}
		if a == "help" {
			return append(append(append([]string(nil), args[:i]...), args[i+1:]...), "--help")
		}
	}
	return args
}

// packFlag is the required --pack of the commands that read one eval pack.
func packFlag() cli.Flag {
	return &cli.StringFlag{Name: "pack", Required: true, Usage: "eval pack `FILE`"}
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

// printJSON prints v indented, as every --format json here does.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// isUsageError reports whether err is urfave/cli's complaint about the
// command line that passed through none of usage.go's handlers (a required
// flag of a type requireFlags does not handle): invalid input, exit 2.
func isUsageError(err error) bool {
	var ee *ExitError
	if err == nil || errors.As(err, &ee) {
		return false
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "Required flag") || strings.HasPrefix(msg, "flag provided but not defined") ||
		strings.HasPrefix(msg, "flag needs an argument") || strings.Contains(msg, "No help topic for")
}
