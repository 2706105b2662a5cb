package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/pluginhost"
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
		Subcommands: []*cli.Command{a.scorersSyncCommand()},
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
	dir := c.String(flagPluginDir)
	m, err := pluginhost.LoadManifest(dir)
	if err != nil {
		return hostErr(fmt.Errorf("scorers sync: plugin manifest in %s: %w", dir, err))
	}
	ids := manifestIDs(m)
	if len(ids) == 0 {
		return hostErr(fmt.Errorf("scorers sync: the plugin manifest %s lists no plugins; build them (make build) or add one with `assay plugins register BIN`", m.Path()))
	}
	schemaPath, explicit := schemaFile(c)
	// install: the first sync without --schema starts the installed schema
	// from the embedded one; the file is written only once the database
	// part succeeded, so a refused sync leaves no file behind.
	install := schemaPath == ""
	var schemaBefore []string
	if install {
		schemaPath = filepath.Join(dir, installedSchemaFile)
		schemaBefore = pack.EmbeddedSchema().ScorerEnum()
	} else {
		schema, err := pack.LoadSchema(schemaPath)
		if err != nil {
			return invalidf("scorers sync: %w", err)
		}
		schemaBefore = schema.ScorerEnum()
	}
	dsn := c.String(flagDB)
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return hostErr(fmt.Errorf("scorers sync: %w", err))
	}
	defer st.Close()
	before, err := st.ScorerEnum(ctx)
	if err != nil && !errors.Is(err, store.ErrNoScorerConstraint) {
		return hostErr(fmt.Errorf("scorers sync: %w", err))
	}

	// The database first: it is the part that can refuse, and a refusal
	// must leave both places as they were.
	if err := st.SyncScorerEnum(ctx, ids); err != nil {
		return hostErr(fmt.Errorf("scorers sync: database %s: %w", store.Redact(dsn), err))
	}
	dbWhere := fmt.Sprintf("DB %s %s (CHECK %s)", st.Dialect(), store.Redact(dsn), store.ScorerConstraint)
	a.printEnumChange(dbWhere, before, ids)

	if install {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return hostErr(fmt.Errorf("scorers sync: the database is synced, but installing the schema failed: %w", err))
		}
		if err := os.WriteFile(schemaPath, packs.Schema(), 0o644); err != nil {
			return hostErr(fmt.Errorf("scorers sync: the database is synced, but writing %s failed: %w", schemaPath, err))
		}
	}
	if !slices.Equal(schemaBefore, ids) {
		if err := pack.RewriteScorerEnum(schemaPath, ids); err != nil {
			return hostErr(fmt.Errorf("scorers sync: the database is synced, but rewriting the schema failed: %w", err))
		}
	}
	a.printEnumChange("schema "+schemaPath+" (scorer.enum)", schemaBefore, ids)

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
		fmt.Fprintf(a.stdout, "every command with --plugin-dir %s now validates packs against %s\n", dir, schemaPath)
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
