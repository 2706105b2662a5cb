package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/invariant"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/host/store"
)

// runtime is what the startup check loaded: the three places scorer IDs
// live, and the open database.
type runtime struct {
	manifest *pluginhost.Manifest
	schema   *pack.Schema
	store    *store.Store // nil when the command needs no database and none exists
	places   *invariant.Places
	report   invariant.Report
}

// close closes the database.
func (r *runtime) close() error {
	if r == nil || r.store == nil {
		return nil
	}
	r.store = nil
	return r.places.Close()
}

// startupConfigOf is where startup looks for the three places. With
// createDB false, a SQLite file that does not exist yet is not created.
func (a *app) startupConfigOf(c *cli.Context, createDB bool) invariant.Config {
	path, _ := schemaFile(c)
	return invariant.Config{
		PluginDir:  pluginDir(c),
		SchemaPath: path,
		DSN:        c.String(flagDB),
		CreateDB:   createDB,
		DBOptions:  a.dbOptions(c),
	}
}

// pluginDir is the plugin directory in use: --plugin-dir (ASSAY_PLUGIN_DIR)
// when given, else a plugins/ folder beside the assay binary when it holds a
// manifest (an installed assay), else the flag's default, bin/plugins, as
// `make build` lays it out (docs/plugins.md, "Where assay finds plugins").
func pluginDir(c *cli.Context) string {
	if c.IsSet(flagPluginDir) {
		return c.String(flagPluginDir)
	}
	if exe, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(exe), "plugins")
		if _, err := os.Stat(filepath.Join(beside, pluginhost.ManifestFile)); err == nil {
			return beside
		}
	}
	return c.String(flagPluginDir)
}

// installedSchemaFile is the schema `assay scorers sync` keeps beside the
// plugin manifest when no --schema is given: the schema in use once private
// scorers are installed.
const installedSchemaFile = "company_eval_pack.v1.json"

// schemaFile resolves the pack schema in use: --schema (ASSAY_SCHEMA), else
// the synced schema beside the plugin manifest when there is one, else ""
// for the schema embedded in assay. explicit says --schema was given.
func schemaFile(c *cli.Context) (path string, explicit bool) {
	if p := c.String(flagSchema); p != "" {
		return p, true
	}
	p := filepath.Join(pluginDir(c), installedSchemaFile)
	if _, err := os.Stat(p); err == nil {
		return p, false
	}
	return "", false
}

// startup runs the three-place check every command that loads packs or
// scores turns runs first: it loads the plugin manifest (--plugin-dir), the
// pack schema (--schema, else the embedded one) and opens the database
// (--db), and compares the three scorer sets. A mismatch is exit 3 with
// every difference and the fixing command. With needDB false, a SQLite file
// that does not exist yet is not created and the DB place is not checked.
func (a *app) startup(c *cli.Context, needDB bool) (*runtime, error) {
	return a.startupWhile(c, needDB, nil)
}

// startupWhile is startup that runs while, with the manifest and the pack
// schema loaded, as the database opens (invariant.LoadWhile). while's work
// is done even when the check then fails; its caller uses none of it then,
// so a failed check is still the first and only thing the command reports.
func (a *app) startupWhile(c *cli.Context, needDB bool, while func(invariant.ManifestPlace, invariant.SchemaPlace)) (*runtime, error) {
	rt, err := loadRuntime(c.Context, a.startupConfigOf(c, needDB), while)
	if err != nil {
		return nil, err
	}
	if !rt.report.OK() {
		err := rt.mismatchError()
		rt.close()
		return nil, hostErr(err)
	}
	if rt.store != nil && rt.store.OpenRetries() > 0 {
		fmt.Fprintf(a.stderr, "note: the database %s was busy; opened it after %d retries\n", rt.places.DB.Source(), rt.store.OpenRetries())
	}
	return rt, nil
}

// loadRuntime loads the three places (invariant.LoadWhile, running while,
// when not nil, as the database opens) and computes the report, without
// judging it.
func loadRuntime(ctx context.Context, cfg invariant.Config, while func(invariant.ManifestPlace, invariant.SchemaPlace)) (*runtime, error) {
	p := invariant.LoadWhile(ctx, cfg, while)
	if err := loadErr("startup check", p); err != nil {
		p.Close()
		return nil, err
	}
	return &runtime{
		manifest: p.Manifest.Manifest,
		schema:   p.Schema.Schema,
		store:    p.DB.Store,
		places:   p,
		report:   p.Report(),
	}, nil
}

// loadErr is the error of the first place p could not load, for a command
// doing what: a schema file that is not a schema is invalid input (exit 2);
// anything else means the host cannot run (exit 3).
func loadErr(doing string, p *invariant.Places) error {
	err := p.Err()
	switch {
	case err == nil:
		return nil
	case p.Manifest.Err == nil && p.Schema.Err != nil:
		return invalidf("%s: %w", doing, err)
	default:
		return hostErr(fmt.Errorf("%s: %w", doing, err))
	}
}

// mismatchError is the one message a failed startup check prints.
func (r *runtime) mismatchError() error {
	return fmt.Errorf("startup check failed (%s)\n%s", r.places, r.report.Error())
}
