package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/sdk/conformance"
)

func (a *app) pluginsCommand() *cli.Command {
	return &cli.Command{
		Name:  "plugins",
		Usage: "list, register, check and scaffold scorer plugins",
		UsageText: `assay plugins list | register BIN... | conformance BIN | new ID [--dir DIR]

Example:
  assay plugins new ticket_linked --dir ./ticket_linked
  assay plugins list
  assay plugins register ./assay-scorer-ticket_linked
  assay plugins conformance ./assay-scorer-ticket_linked`,
		Subcommands: []*cli.Command{a.pluginsListCommand(), a.pluginsRegisterCommand(), a.pluginsConformanceCommand(), a.pluginsNewCommand()},
	}
}

func (a *app) pluginsListCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "show the plugin manifest and whether each binary still has its pinned sha256",
		UsageText: `assay [--plugin-dir DIR] plugins list [--format text|json]

Example:
  assay --plugin-dir bin/plugins plugins list
  assay plugins list --format json`,
		Flags:  []cli.Flag{formatFlag()},
		Action: a.pluginsList,
	}
}

// pluginRow is one line of `plugins list`.
type pluginRow struct {
	pluginhost.Entry
	Hash string `json:"hash"` // ok, changed, missing
}

func (a *app) pluginsList(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	if c.NArg() > 0 {
		return invalidf("plugins list: takes no arguments, got %q", c.Args().Slice())
	}
	m, err := pluginhost.LoadManifest(pluginDir(c))
	if err != nil {
		return hostErr(fmt.Errorf("plugins list: %w", err))
	}
	rows := make([]pluginRow, len(m.Entries))
	for i, e := range m.Entries {
		rows[i] = pluginRow{Entry: e, Hash: hashState(m, e)}
	}
	if format == "json" {
		return printJSON(a.stdout, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(a.stdout, "no plugins in %s\n", m.Path())
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tVERSION\tPROTOCOL\tKPIS\tBINARY\tSHA256\tHASH")
	for _, r := range rows {
		keys := make([]string, len(r.KPIs))
		for i, k := range r.KPIs {
			keys[i] = k.Key
		}
		kpis := strings.Join(keys, ",")
		if kpis == "" {
			kpis = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.ID, r.Version, r.Protocol, kpis, r.Binary, shortHash(r.SHA256), r.Hash)
	}
	return tw.Flush()
}

// hashState says whether e's binary still has the pinned sha256.
func hashState(m *pluginhost.Manifest, e pluginhost.Entry) string {
	sum, err := pluginhost.FileSHA256(m.BinaryPath(e))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "missing"
	case err != nil:
		return "unreadable"
	case sum != e.SHA256:
		return "changed"
	}
	return "ok"
}

func shortHash(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func (a *app) pluginsRegisterCommand() *cli.Command {
	return &cli.Command{
		Name:  "register",
		Usage: "hash each plugin binary, ask it to describe itself and write its manifest entry",
		Description: `Each BIN must be named assay-scorer-<id>. It is launched (pinned to the
sha256 just computed), asked to Describe itself, and its entry is written to
DIR/manifest.json, replacing an entry with the same id. Each BIN must be a
file inside the plugin directory (copy it there first): the manifest stores
its file name only, and a binary elsewhere, or a symlink that leads out of
the directory, is refused with exit 3. Afterwards run assay scorers sync
so that the schema enum and the DB CHECK name the new scorer too.`,
		UsageText: `assay [--plugin-dir DIR] plugins register BIN...

Example:
  assay --plugin-dir bin/plugins plugins register bin/plugins/assay-scorer-*
  cp assay-scorer-ticket_linked bin/plugins/ &&
    assay --plugin-dir bin/plugins plugins register bin/plugins/assay-scorer-ticket_linked && assay scorers sync`,
		Action: a.pluginsRegister,
	}
}

func (a *app) pluginsRegister(c *cli.Context) error {
	if c.NArg() == 0 {
		return invalidf("plugins register: name at least one plugin binary")
	}
	for _, bin := range c.Args().Slice() {
		st, err := os.Stat(bin)
		if err != nil {
			return invalidf("plugins register: %w", err)
		}
		if !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			return invalidf("plugins register: %s is not an executable file", bin)
		}
		name := strings.TrimSuffix(filepath.Base(bin), ".exe")
		if id, ok := strings.CutPrefix(name, pluginhost.BinaryPrefix); !ok || id == "" {
			return invalidf("plugins register: %s: a scorer plugin binary is named %s<id>, its scorer id (e.g. %sticket_linked)",
				bin, pluginhost.BinaryPrefix, pluginhost.BinaryPrefix)
		}
	}
	m, err := pluginhost.LoadManifest(pluginDir(c))
	if err != nil {
		return hostErr(fmt.Errorf("plugins register: %w", err))
	}
	entries, err := pluginhost.Register(c.Context, m, c.Args().Slice(), a.logger())
	for _, e := range entries {
		fmt.Fprintf(a.stdout, "registered %s %s (%d KPI keys, sha256 %s) as %s\n", e.ID, e.Version, len(e.KPIs), shortHash(e.SHA256), e.Binary)
	}
	if errors.Is(err, pluginhost.ErrBinaryName) {
		return invalidf("plugins register: %w (manifest unchanged)", err)
	}
	if err != nil {
		return hostErr(fmt.Errorf("plugins register: %w (manifest unchanged)", err))
	}
	fmt.Fprintf(a.stdout, "wrote %s; run `assay scorers sync` if the scorer set changed\n", m.Path())
	return nil
}

func (a *app) pluginsConformanceCommand() *cli.Command {
	return &cli.Command{
		Name:  "conformance",
		Usage: "run the SDK's conformance checks against a plugin binary",
		Description: `Launches BIN as the host does and checks: a valid description, every
score in [0,1] (never NaN), checks naming only declared KPI keys, a failed
check carrying its KPI's declared failure tag and that tag reaching the
result, a task setting none of the KPI keys not scored as a pass,
deterministic results, a cancelled context honoured, concurrent batches safe.
Prints each check as ok or FAIL with its problems and what to change; exits
0 when all pass, 1 otherwise.`,
		UsageText: `assay plugins conformance BIN

Example:
  assay plugins conformance ./assay-scorer-ticket_linked`,
		Action: a.pluginsConformance,
	}
}

func (a *app) pluginsConformance(c *cli.Context) error {
	if c.NArg() != 1 {
		return invalidf("plugins conformance: name one plugin binary, got %d arguments", c.NArg())
	}
	bin := c.Args().First()
	if _, err := os.Stat(bin); err != nil {
		return invalidf("plugins conformance: %w", err)
	}
	rep, err := conformance.CheckBinary(c.Context, bin, a.stderr)
	if err != nil {
		fmt.Fprintf(a.stdout, "FAIL  launch\n      %v\n", err)
		return &ExitError{Code: ExitGate}
	}
	for _, r := range rep {
		if r.OK() {
			fmt.Fprintf(a.stdout, "ok    %s\n", r.Name)
			for _, f := range r.Findings {
				fmt.Fprintf(a.stdout, "      finding: %s\n", f)
			}
			continue
		}
		fmt.Fprintf(a.stdout, "FAIL  %s\n", r.Name)
		for _, p := range r.Problems {
			fmt.Fprintf(a.stdout, "      %s\n", p)
		}
		if r.Fix != "" {
			fmt.Fprintf(a.stdout, "      what to change: %s\n", r.Fix)
		}
	}
	if !rep.OK() {
		return &ExitError{Code: ExitGate}
	}
	return nil
}
