package invariant

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/host/store"
)

// Config says where the three places are.
type Config struct {
	PluginDir  string // the directory of the plugin manifest
	SchemaPath string // the pack schema file; "" for the schema embedded in assay
	DSN        string // the database: a SQLite file path or a postgres:// URL
	// CreateDB opens the database even when it is a SQLite file that does
	// not exist yet, creating it. Without it such a file is left alone and
	// the DB place is not opened. A Postgres URL is always opened.
	CreateDB bool
	// DBOptions are passed to store.Open (the Postgres timeouts, say).
	DBOptions []store.Option
}

// Places is what Load found in each of the three places. Each place has its
// own Err; a failed place does not stop the others from loading.
type Places struct {
	Manifest ManifestPlace
	Schema   SchemaPlace
	DB       DBPlace
}

// NoManifestError is a plugin directory without a manifest file.
type NoManifestError struct {
	Path string // the absolute path of the manifest that is missing
}

func (e *NoManifestError) Error() string {
	return fmt.Sprintf("no plugin manifest at %s (set --plugin-dir or ASSAY_PLUGIN_DIR, or run `make build`)", e.Path)
}

// ManifestPlace is the plugin manifest, the source of the scorer set.
type ManifestPlace struct {
	Dir      string               // Config.PluginDir
	Manifest *pluginhost.Manifest // nil when Err is set
	IDs      []string             // the registered scorer IDs, sorted
	Err      error
}

// Source is the manifest file's path.
func (p ManifestPlace) Source() string {
	if p.Manifest != nil {
		return p.Manifest.Path()
	}
	return filepath.Join(p.Dir, pluginhost.ManifestFile)
}

// SchemaPlace is the pack schema and its scorer enum.
type SchemaPlace struct {
	Path   string       // Config.SchemaPath; "" for the embedded schema
	Schema *pack.Schema // nil when Err is set
	IDs    []string     // scorer.enum
	Err    error
}

// Source is the schema file's path, or "embedded".
func (p SchemaPlace) Source() string {
	if p.Path == "" {
		return "embedded"
	}
	return p.Path
}

// DBPlace is the database and its scorer CHECK.
type DBPlace struct {
	DSN   string       // Config.DSN
	Store *store.Store // open; nil when Err is set or the database was not opened
	// Constraint reports whether the database has the scorer CHECK. A
	// database without it allows no scorer at all: IDs is empty, every
	// manifest scorer is missing there, and `assay scorers sync` adds it.
	Constraint bool
	IDs        []string // the CHECK's scorer IDs, sorted; nil when not opened
	// Skipped says why a database without Err was not opened.
	Skipped string
	Err     error
}

// Opened reports whether the database was opened (and its enum read).
func (p DBPlace) Opened() bool { return p.Store != nil }

// Created reports whether this Load created the database. A new database's
// CHECK is the manifest's scorer set, written in the transaction that
// created it (see docs/storage.md).
func (p DBPlace) Created() bool { return p.Store != nil && p.Store.Created() }

// Source is the dialect and the database's path or URL, password hidden.
func (p DBPlace) Source() string {
	if p.Store == nil {
		return store.Redact(p.DSN)
	}
	return p.Store.Dialect().String() + " " + store.Redact(p.DSN)
}

// Load reads the three places cfg names: the plugin manifest, the pack
// schema's scorer enum and the database's scorer CHECK. It opens the
// database (see Config.CreateDB); a database it creates starts with the
// manifest's scorer set. When the manifest cannot be loaded, Load opens only
// a SQLite file that exists: anything else could create a database with the
// wrong scorer set. The caller closes the Places.
func Load(ctx context.Context, cfg Config) *Places {
	return LoadWhile(ctx, cfg, nil)
}

// LoadWhile is Load that, once the manifest and the schema have loaded,
// runs while with them as the database opens, and returns when both are
// done: opening a database can mean waiting for a server to migrate a new
// schema, which takes about as long as loading a large pack
// (docs/performance.md, "Postgres"). while is not run when the manifest
// or the schema failed to load (the Places then have an Err). while reads
// the two places only; it must not touch the database.
func LoadWhile(ctx context.Context, cfg Config, while func(ManifestPlace, SchemaPlace)) *Places {
	p := &Places{
		Manifest: loadManifest(cfg.PluginDir),
		Schema:   loadSchema(cfg.SchemaPath),
	}
	if p.Manifest.Err != nil && store.IsPostgresURL(cfg.DSN) {
		p.DB = DBPlace{DSN: cfg.DSN, Skipped: "not opened: the plugin manifest could not be loaded"}
		return p
	}
	if while == nil || p.Manifest.Err != nil || p.Schema.Err != nil {
		p.DB = loadDB(ctx, cfg, p.Manifest.Err == nil, p.Manifest.IDs)
		return p
	}
	db := make(chan DBPlace, 1)
	go func() { db <- loadDB(ctx, cfg, true, p.Manifest.IDs) }()
	while(p.Manifest, p.Schema)
	p.DB = <-db
	return p
}

func loadManifest(dir string) ManifestPlace {
	p := ManifestPlace{Dir: dir}
	path := filepath.Join(dir, pluginhost.ManifestFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		// Without a manifest there is no scorer set to compare: saying so
		// beats listing every schema scorer as "no plugin" and advising a
		// sync that would drop them all.
		if abs, aerr := filepath.Abs(path); aerr == nil {
			path = abs
		}
		p.Err = &NoManifestError{Path: path}
		return p
	}
	m, err := pluginhost.LoadManifest(dir)
	if err != nil {
		p.Err = fmt.Errorf("plugin manifest in %s: %w", dir, err)
		return p
	}
	p.Manifest = m
	for _, id := range m.IDs() {
		p.IDs = append(p.IDs, string(id))
	}
	return p
}

func loadSchema(path string) SchemaPlace {
	p := SchemaPlace{Path: path}
	if path == "" {
		p.Schema = pack.EmbeddedSchema()
	} else {
		s, err := pack.LoadSchema(path)
		if err != nil {
			p.Err = fmt.Errorf("schema %s: %w", path, err)
			return p
		}
		p.Schema = s
	}
	p.IDs = p.Schema.ScorerEnum()
	return p
}

func loadDB(ctx context.Context, cfg Config, manifestLoaded bool, manifestIDs []string) DBPlace {
	dsn := cfg.DSN
	p := DBPlace{DSN: dsn}
	if !(cfg.CreateDB && manifestLoaded) && !exists(dsn) {
		p.Skipped = "no database yet (the first command that stores results creates it)"
		return p
	}
	st, err := store.Open(ctx, dsn, append([]store.Option{store.WithScorerEnum(manifestIDs)}, cfg.DBOptions...)...)
	if err != nil {
		p.Err = err
		return p
	}
	enum, err := st.ScorerEnum(ctx)
	switch {
	case errors.Is(err, store.ErrNoScorerConstraint):
		p.IDs = []string{}
	case err != nil:
		st.Close()
		p.Err = fmt.Errorf("database %s: %w", store.Redact(dsn), err)
		return p
	default:
		p.IDs, p.Constraint = enum, true
	}
	p.Store = st
	return p
}

// exists reports whether dsn names a database that is already there: a
// Postgres URL always counts (and a keyword connection string, so that
// store.Open refuses it with its message); a SQLite path counts when the
// file exists.
func exists(dsn string) bool {
	if dsn == "" {
		return false
	}
	if store.IsPostgresURL(dsn) || store.IsKeywordDSN(dsn) {
		return true
	}
	_, err := os.Stat(dsn)
	return err == nil
}

// Err is the first place's error, in the order manifest, schema, DB; nil
// when every place loaded.
func (p *Places) Err() error {
	for _, err := range []error{p.Manifest.Err, p.Schema.Err, p.DB.Err} {
		if err != nil {
			return err
		}
	}
	return nil
}

// Report compares the three places. A database that was not opened is
// taken to agree with the manifest.
func (p *Places) Report() Report {
	db := p.DB.IDs
	if !p.DB.Opened() {
		db = p.Manifest.IDs
	}
	return Check(p.Manifest.IDs, p.Schema.IDs, db)
}

// String names the three places: "manifest M; schema S; DB sqlite D", or
// "no database" for a database that was not opened.
func (p *Places) String() string {
	db := "no database"
	if p.DB.Opened() {
		db = "DB " + p.DB.Source()
	}
	return fmt.Sprintf("manifest %s; schema %s; %s", p.Manifest.Source(), p.Schema.Source(), db)
}

// Close closes the database, when it was opened; closing twice is harmless.
func (p *Places) Close() error {
	if p == nil || p.DB.Store == nil {
		return nil
	}
	return p.DB.Store.Close()
}
