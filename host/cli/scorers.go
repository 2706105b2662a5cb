package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/invariant"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/packs"
)

func (a *app) scorersCommand() *cli.Command {
	return &cli.Command{
		Name:  "scorers",
		Usage: "keep the scorer IDs in the schema enum and the DB CHECK in step with the plugin manifest",
		UsageText: `assay scorers sync

Example:
  assay scorers sync`,
		Subcommands: []*cli.Command{a.scorersSyncCommand(), a.scorersProbeCommand()},
	}
}

func (a *app) scorersSyncCommand() *cli.Command {
	return &cli.Command{
		Name:  "sync",
		Usage: "rewrite the schema file's scorer enum and the DB CHECK from the plugin manifest",
		Description: `The plugin manifest (--plugin-dir) is the source of the scorer set. sync
rewrites scorer.enum in the schema in use (--schema; else the schema it keeps
beside the plugin manifest, <plugin-dir>/` + installedSchemaFile + `, made from
the embedded one the first time, which every command then uses) and the CHECK ck_company_eval_packs_scorer of the database
(--db), the DB part in one transaction (SQLite rebuilds the table, keeping
every row). It refuses, changing nothing, when stored pack tasks still use a
scorer the manifest no longer has, and names them.`,
		UsageText: `assay [--plugin-dir DIR] [--schema FILE] [--db PATH|URL] scorers sync

Example:
  assay plugins register ./assay-scorer-ticket_linked
  assay scorers sync`,
		Action: a.scorersSync,
	}
}

func (a *app) scorersSync(c *cli.Context) error {
	if c.NArg() > 0 {
		return invalidf("scorers sync: takes no arguments, got %q", c.Args().Slice())
	}
	ctx := c.Context
	cfg := a.startupConfigOf(c, true)
	_, explicit := schemaFile(c)
	p := invariant.Load(ctx, cfg)
	defer p.Close()
	if err := loadErr("scorers sync", p); err != nil {
		return err
	}
	ids := p.Manifest.IDs
	if len(ids) == 0 {
		return hostErr(fmt.Errorf("scorers sync: the plugin manifest %s lists no plugins; build them (make build) or add one with `assay plugins register BIN`", p.Manifest.Source()))
	}
	// install: the first sync without --schema starts the installed schema
	// from the embedded one; the file is written only once the database
	// part succeeded, so a refused sync leaves no file behind.
	schemaPath, install := cfg.SchemaPath, cfg.SchemaPath == ""
	if install {
		schemaPath = filepath.Join(cfg.PluginDir, installedSchemaFile)
	}

	// The database first: it is the part that can refuse, and a refusal
	// must leave both places as they were.
	st := p.DB.Store
	if err := st.SyncScorerEnum(ctx, ids); err != nil {
		return hostErr(fmt.Errorf("scorers sync: database %s: %w", store.Redact(cfg.DSN), err))
	}
	dbWhere := fmt.Sprintf("DB %s (CHECK %s)", p.DB.Source(), store.ScorerConstraint)
	if p.DB.Created() {
		fmt.Fprintf(a.stdout, "%s: created with the manifest's scorers\n", dbWhere)
	} else {
		a.printEnumChange(dbWhere, p.DB.IDs, ids)
	}

	if install {
		if err := os.MkdirAll(cfg.PluginDir, 0o755); err != nil {
			return hostErr(fmt.Errorf("scorers sync: the database is synced, but installing the schema failed: %w", err))
		}
		if err := os.WriteFile(schemaPath, packs.Schema(), 0o644); err != nil {
			return hostErr(fmt.Errorf("scorers sync: the database is synced, but writing %s failed: %w", schemaPath, err))
		}
	}
	if !slices.Equal(p.Schema.IDs, ids) {
		if err := pack.RewriteScorerEnum(schemaPath, ids); err != nil {
			return hostErr(fmt.Errorf("scorers sync: the database is synced, but rewriting the schema failed: %w", err))
		}
	}
	a.printEnumChange("schema "+schemaPath+" (scorer.enum)", p.Schema.IDs, ids)

	// Read both places back: the sync is done only when they agree.
	after, err := pack.LoadSchema(schemaPath)
	if err != nil {
		return hostErr(fmt.Errorf("scorers sync: reading the rewritten schema back: %w", err))
	}
	dbAfter, err := st.ScorerEnum(ctx)
	if err != nil {
		return hostErr(fmt.Errorf("scorers sync: reading the DB enum back: %w", err))
	}
	if !slices.Equal(after.ScorerEnum(), ids) || !slices.Equal(dbAfter, ids) {
		return hostErr(fmt.Errorf("scorers sync: after the sync the places still differ: manifest %v, schema %v, DB %v", ids, after.ScorerEnum(), dbAfter))
	}
	fmt.Fprintf(a.stdout, "the manifest, the schema enum and the DB enum agree: %s\n", strings.Join(ids, ", "))
	if !explicit {
		fmt.Fprintf(a.stdout, "every command with --plugin-dir %s now validates packs against %s\n", cfg.PluginDir, schemaPath)
	}
	return nil
}

// printEnumChange prints what a sync did to one place.
func (a *app) printEnumChange(where string, before, after []string) {
	added, removed := setDiff(after, before), setDiff(before, after)
	if len(added) == 0 && len(removed) == 0 {
		fmt.Fprintf(a.stdout, "%s: already in sync\n", where)
		return
	}
	var parts []string
	for _, id := range added {
		parts = append(parts, "+"+id)
	}
	for _, id := range removed {
		parts = append(parts, "-"+id)
	}
	fmt.Fprintf(a.stdout, "%s: rewrote (%s)\n", where, strings.Join(parts, " "))
}

// setDiff returns the elements of a not in b, in a's order.
func setDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
