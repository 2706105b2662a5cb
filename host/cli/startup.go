package cli

import (
	"context"
	"errors"
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
	manifest   *pluginhost.Manifest
	schema     *pack.Schema
	schemaPath string       // the --schema file; empty for the embedded schema
	store      *store.Store // nil when the command needs no database and none exists
	dsn        string       // the --db value
	dbEnum     []string     // nil when store is nil
	report     invariant.Report
}

// close closes the database.
func (r *runtime) close() error {
	if r == nil || r.store == nil {
		return nil
	}
	err := r.store.Close()
	r.store = nil
	return err
}

// startupConfig is where startup looks for the three places.
type startupConfig struct {
	pluginDir  string
	schemaPath string // empty: the embedded schema
	dsn        string
	needDB     bool
}

func startupConfigOf(c *cli.Context, needDB bool) startupConfig {
	path, _ := schemaFile(c)
	return startupConfig{
		pluginDir:  c.String(flagPluginDir),
		schemaPath: path,
		dsn:        c.String(flagDB),
		needDB:     needDB,
	}
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
	p := filepath.Join(c.String(flagPluginDir), installedSchemaFile)
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
	rt, err := loadRuntime(c.Context, startupConfigOf(c, needDB))
	if err != nil {
		return nil, err
	}
	if !rt.report.OK() {
		err := rt.mismatchError()
		rt.close()
		return nil, hostErr(err)
	}
	return rt, nil
}

// loadRuntime loads the three places and computes the report, without
// judging it (doctor reports a mismatch instead of stopping at it).
func loadRuntime(ctx context.Context, cfg startupConfig) (*runtime, error) {
	rt := &runtime{schemaPath: cfg.schemaPath, dsn: cfg.dsn}
	m, err := pluginhost.LoadManifest(cfg.pluginDir)
	if err != nil {
		return nil, hostErr(fmt.Errorf("startup check: plugin manifest in %s: %w", cfg.pluginDir, err))
	}
	rt.manifest = m
	if cfg.schemaPath != "" {
		s, err := pack.LoadSchema(cfg.schemaPath)
		if err != nil {
			return nil, invalidf("schema %s: %w", cfg.schemaPath, err)
		}
		rt.schema = s
	} else {
		rt.schema = pack.EmbeddedSchema()
	}
	if cfg.needDB || dbExists(cfg.dsn) {
		st, err := store.Open(ctx, cfg.dsn)
		if err != nil {
			return nil, hostErr(fmt.Errorf("startup check: %w", err))
		}
		rt.store = st
		if st.Created() && len(rt.manifest.Entries) > 0 {
			// A database this command just created starts with the
			// installed scorer set, not the migrations' built-in one: it
			// holds no rows a sync could refuse for.
			if err := st.SyncScorerEnum(ctx, manifestIDs(rt.manifest)); err != nil {
				st.Close()
				return nil, hostErr(fmt.Errorf("startup check: a new database: %w", err))
			}
		}
		enum, err := st.ScorerEnum(ctx)
		if err != nil && !errors.Is(err, store.ErrNoScorerConstraint) {
			st.Close()
			return nil, hostErr(fmt.Errorf("startup check: %w", err))
		}
		// A database without the constraint has an empty enum: every
		// manifest scorer is reported missing there, and sync adds it.
		rt.dbEnum = enum
	}
	rt.report = rt.check()
	return rt, nil
}

// check compares the three places; without a database, the DB place is
// taken to agree with the manifest.
func (r *runtime) check() invariant.Report {
	ids := manifestIDs(r.manifest)
	db := r.dbEnum
	if r.store == nil {
		db = ids
	}
	return invariant.Check(ids, r.schema.ScorerEnum(), db)
}

// mismatchError is the one message a failed startup check prints.
func (r *runtime) mismatchError() error {
	return fmt.Errorf("startup check failed (%s)\n%s", r.places(), r.report.Error())
}

// places names the three places checked.
func (r *runtime) places() string {
	db := "no database"
	if r.store != nil {
		db = "DB " + r.store.Dialect().String() + " " + store.Redact(r.dsn)
	}
	return fmt.Sprintf("manifest %s; schema %s; %s", r.manifest.Path(), r.schemaName(), db)
}

func (r *runtime) schemaName() string {
	if r.schemaPath == "" {
		return "embedded"
	}
	return r.schemaPath
}

func manifestIDs(m *pluginhost.Manifest) []string {
	ids := m.IDs()
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

// dbExists reports whether dsn names a database that is already there: a
// Postgres URL always counts; a SQLite path counts when the file exists.
func dbExists(dsn string) bool {
	if dsn == "" {
		return false
	}
	if store.IsPostgresURL(dsn) {
		return true
	}
	_, err := os.Stat(dsn)
	return err == nil
}
