package cli

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/state"
	"github.com/assay-eval/assay/pkg/diag"
)

// stateTokenEnv holds the Company OS token when --token is not given.
const stateTokenEnv = "ASSAY_COMPANY_OS_TOKEN"

func (a *app) stateCommand() *cli.Command {
	return &cli.Command{
		Name:  "state",
		Usage: "Company OS state snapshots: capture the live state, check snapshot files",
		UsageText: `assay state capture --api-base URL --company ID [--token T] [--timeout 10s] [--retries 2] [--out FILE]
   assay state check FILE...

Example:
   ASSAY_COMPANY_OS_TOKEN=... assay state capture --api-base https://os.example.com --company acme > after.json
   assay state check state/invoice.before.json state/invoice.after.json`,
		Subcommands: []*cli.Command{a.stateCaptureCommand(), a.stateCheckCommand()},
	}
}

func (a *app) stateCaptureCommand() *cli.Command {
	return &cli.Command{
		Name:  "capture",
		Usage: "read a company's tasks and memory from the live Company OS API into a snapshot",
		UsageText: `assay state capture --api-base URL --company ID [--token T | $` + stateTokenEnv + `]
                    [--timeout 10s] [--retries 2] [--out FILE]

Reads GET {api-base}/api/company/companies/{id}/tasks and .../memory and prints the
snapshot {"tasks": [...], "memory": [...], "captured_at": "..."} as indented JSON,
to stdout or to --out. 5xx responses and connection errors are retried with
backoff; --timeout bounds the whole capture. The token is sent as a bearer token
and never printed.

Exit codes: 0 captured; 2 invalid flags; 3 the API could not be read.

Example:
   assay state capture --api-base https://os.example.com --company acme --out after.json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "api-base", Usage: "Company OS base `URL` (required)"},
			&cli.StringFlag{Name: "company", Usage: "company `ID` (required)"},
			&cli.StringFlag{Name: "token", EnvVars: []string{stateTokenEnv}, Usage: "bearer `TOKEN` for the API"},
			&cli.DurationFlag{Name: "timeout", Value: state.DefaultTimeout, Usage: "give up after `DURATION` (retries included)"},
			&cli.IntFlag{Name: "retries", Value: 2, Usage: "retry a 5xx or connection error `N` times"},
			&cli.StringFlag{Name: "out", Usage: "write the snapshot to `FILE` instead of stdout"},
		},
		Action: a.stateCapture,
	}
}

func (a *app) stateCapture(c *cli.Context) error {
	if c.NArg() > 0 {
		return invalidf("state capture: unexpected arguments %q", c.Args().Slice())
	}
	for _, f := range []string{"api-base", "company"} {
		if strings.TrimSpace(c.String(f)) == "" {
			return invalidf("state capture: --%s is required", f)
		}
	}
	if c.Duration("timeout") <= 0 {
		return invalidf("--timeout: want a positive duration, got %s", c.Duration("timeout"))
	}
	if c.Int("retries") < 0 {
		return invalidf("--retries: want 0 or more, got %d", c.Int("retries"))
	}
	cfg := state.CaptureConfig{
		APIBase: c.String("api-base"),
		Company: c.String("company"),
		Token:   strings.TrimSpace(c.String("token")),
		Timeout: c.Duration("timeout"),
		Retries: c.Int("retries"),
		Logger:  slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	snap, err := state.Capture(c.Context, cfg)
	if err != nil {
		return hostErr(err)
	}
	out, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return hostErr(fmt.Errorf("printing the snapshot: %w", err))
	}
	out = append(out, '\n')
	if path := c.String("out"); path != "" {
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return hostErr(fmt.Errorf("writing the snapshot: %w", err))
			}
		}
		if err := os.WriteFile(path, out, 0o644); err != nil {
			return hostErr(fmt.Errorf("writing the snapshot: %w", err))
		}
		fmt.Fprintf(a.stderr, "captured %d tasks and %d memory entries to %s\n", len(snap.Tasks), len(snap.Memory), path)
		return nil
	}
	_, err = a.stdout.Write(out)
	return err
}

func (a *app) stateCheckCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "check state snapshot files; every problem is reported with its file:line:col",
		UsageText: `assay state check [--format text|json] FILE...

Exit codes: 0 every file is a valid snapshot (warnings allowed); 2 a file is not.

Example:
   assay state check testdata/state/invoice.after.json`,
		Flags:  []cli.Flag{formatFlag()},
		Action: a.stateCheck,
	}
}

func (a *app) stateCheck(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	if c.NArg() == 0 {
		return invalidf("state check: want at least one FILE")
	}
	var all diag.List
	srcs := map[string][]byte{}
	for _, path := range c.Args().Slice() {
		snap, src, diags := state.ReadFile(path)
		srcs[path] = src
		all = append(all, diags...)
		if snap != nil && format == "text" {
			fmt.Fprintf(a.stdout, "%s: %d tasks, %d memory entries\n", path, len(snap.Tasks), len(snap.Memory))
		}
	}
	if format == "json" {
		out, err := json.MarshalIndent(all, "", "  ")
		if err != nil {
			return hostErr(err)
		}
		fmt.Fprintf(a.stdout, "%s\n", out)
	} else if len(all) > 0 {
		fmt.Fprint(a.stderr, all.Render(srcs))
	}
	if all.HasErrors() {
		return &ExitError{Code: ExitInvalid}
	}
	return nil
}
