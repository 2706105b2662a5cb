package invariant

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/store/storetest"
	"github.com/assay-eval/assay/packs"
	"github.com/assay-eval/assay/pkg/scorer"
)

// withPrivate is an installed scorer set: the six built-ins and a private
// scorer, sorted.
var withPrivate = []string{"acme_invoice", "answer_keywords", "composite", "memory_grounding", "stigmergic", "task_state", "tool_sequence"}

// places is a plugin directory whose manifest lists ids and a schema file
// whose enum is ids; the database is the test's.
type places struct {
	pluginDir, schemaPath string
}

func newPlaces(t testing.TB, ids []string) places {
	t.Helper()
	dir := t.TempDir()
	p := places{pluginDir: filepath.Join(dir, "plugins"), schemaPath: filepath.Join(dir, "schema.json")}
	m := &pluginhost.Manifest{Dir: p.pluginDir}
	for _, id := range ids {
		m.Entries = append(m.Entries, pluginhost.Entry{ID: scorer.ID(id), Binary: pluginhost.BinaryPrefix + id,
			SHA256: strings.Repeat("0", 64), Version: "1.0.0", Protocol: 1, KPIs: []scorer.KPI{}, Needs: []scorer.Need{}})
	}
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.schemaPath, packs.Schema(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := pack.RewriteScorerEnum(p.schemaPath, ids); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p places) config(dsn string, create bool) Config {
	return Config{PluginDir: p.pluginDir, SchemaPath: p.schemaPath, DSN: dsn, CreateDB: create}
}

func syncDB(t testing.TB, dsn string, ids []string) {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SyncScorerEnum(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
}

// dropConstraint replaces company_eval_packs of a SQLite database with a
// copy that has no scorer CHECK.
func dropConstraint(t testing.TB, dsn string) {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, q := range []string{
		"DROP TABLE company_eval_packs",
		`CREATE TABLE company_eval_packs (id INTEGER PRIMARY KEY, pack_sha256 TEXT NOT NULL, company TEXT NOT NULL DEFAULT '',
			label TEXT NOT NULL, scorer TEXT NOT NULL, weight REAL NOT NULL DEFAULT 1, slice_tags TEXT NOT NULL DEFAULT '[]',
			created_at TIMESTAMP NOT NULL, CONSTRAINT uq_company_eval_packs_task UNIQUE (pack_sha256, label))`,
	} {
		if _, err := st.DB().Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// loaded is what a test compares of a Places.
type loaded struct {
	ManifestIDs, SchemaIDs, DBIDs []string
	ManifestErr, SchemaErr, DBErr bool
	SchemaSource                  string
	Opened, Created, Constraint   bool
	Skipped                       bool
	Differences                   []string
}

func summarize(p *Places) loaded {
	l := loaded{
		ManifestIDs: p.Manifest.IDs, SchemaIDs: p.Schema.IDs, DBIDs: p.DB.IDs,
		ManifestErr: p.Manifest.Err != nil, SchemaErr: p.Schema.Err != nil, DBErr: p.DB.Err != nil,
		SchemaSource: p.Schema.Source(),
		Opened:       p.DB.Opened(), Created: p.DB.Created(), Constraint: p.DB.Constraint,
		Skipped: p.DB.Skipped != "",
	}
	for _, d := range p.Report().Differences {
		l.Differences = append(l.Differences, d.String())
	}
	return l
}

// TestLoad (issue 13 item 2): one loader returns the three sets with their
// sources, each place's error on its own, and the rule that a database
// without the scorer CHECK has an empty enum.
func TestLoad(t *testing.T) {
	builtins := withPrivate[1:]
	tests := []struct {
		name  string
		setup func(t *testing.T, p places) Config
		want  loaded
	}{
		{
			name: "all agree",
			setup: func(t *testing.T, p places) Config {
				dsn := storetest.SQLite(t)
				syncDB(t, dsn, withPrivate)
				return p.config(dsn, false)
			},
			want: loaded{ManifestIDs: withPrivate, SchemaIDs: withPrivate, DBIDs: withPrivate, SchemaSource: "schema.json",
				Opened: true, Constraint: true},
		},
		{
			name: "embedded schema",
			setup: func(t *testing.T, p places) Config {
				dsn := storetest.SQLite(t)
				syncDB(t, dsn, withPrivate)
				cfg := p.config(dsn, false)
				cfg.SchemaPath = ""
				return cfg
			},
			want: loaded{ManifestIDs: withPrivate, SchemaIDs: builtins, DBIDs: withPrivate, SchemaSource: "embedded",
				Opened: true, Constraint: true, Differences: []string{"missing in schema enum: acme_invoice"}},
		},
		{
			name:  "no database yet, not created",
			setup: func(t *testing.T, p places) Config { return p.config(storetest.SQLite(t), false) },
			want:  loaded{ManifestIDs: withPrivate, SchemaIDs: withPrivate, SchemaSource: "schema.json", Skipped: true},
		},
		{
			name:  "new database gets the manifest's scorers",
			setup: func(t *testing.T, p places) Config { return p.config(storetest.SQLite(t), true) },
			want: loaded{ManifestIDs: withPrivate, SchemaIDs: withPrivate, DBIDs: withPrivate, SchemaSource: "schema.json",
				Opened: true, Created: true, Constraint: true},
		},
		{
			name: "no constraint is an empty enum",
			setup: func(t *testing.T, p places) Config {
				dsn := storetest.SQLite(t)
				dropConstraint(t, dsn)
				return p.config(dsn, false)
			},
			want: loaded{ManifestIDs: withPrivate, SchemaIDs: withPrivate, DBIDs: []string{}, SchemaSource: "schema.json",
				Opened: true, Differences: prefixed("missing in DB enum: ", withPrivate)},
		},
		{
			name: "broken schema, other places still loaded",
			setup: func(t *testing.T, p places) Config {
				if err := os.WriteFile(p.schemaPath, []byte("{"), 0o644); err != nil {
					t.Fatal(err)
				}
				dsn := storetest.SQLite(t)
				syncDB(t, dsn, withPrivate)
				return p.config(dsn, false)
			},
			want: loaded{ManifestIDs: withPrivate, DBIDs: withPrivate, SchemaErr: true, SchemaSource: "schema.json",
				Opened: true, Constraint: true, Differences: prefixed("missing in schema enum: ", withPrivate)},
		},
		{
			name: "broken manifest creates no database",
			setup: func(t *testing.T, p places) Config {
				if err := os.WriteFile(filepath.Join(p.pluginDir, pluginhost.ManifestFile), []byte("{"), 0o644); err != nil {
					t.Fatal(err)
				}
				return p.config(storetest.SQLite(t), true)
			},
			want: loaded{ManifestErr: true, SchemaIDs: withPrivate, SchemaSource: "schema.json", Skipped: true,
				Differences: prefixed("in schema enum but no plugin: ", withPrivate)},
		},
	}
	for _, tt := range tests {
		for _, via := range []string{"Load", "LoadWhile"} {
			t.Run(tt.name+"/"+via, func(t *testing.T) {
				t.Parallel()
				p := newPlaces(t, withPrivate)
				cfg := tt.setup(t, p)
				got := loadVia(t, via, cfg)
				defer got.Close()
				checkLoaded(t, cfg, tt.want, got)
			})
		}
	}
}

// loadVia loads cfg with Load or LoadWhile; LoadWhile's while must run
// exactly when the manifest and the schema loaded, and see them.
func loadVia(t *testing.T, via string, cfg Config) *Places {
	t.Helper()
	if via == "Load" {
		return Load(context.Background(), cfg)
	}
	var seen []string
	ran := false
	got := LoadWhile(context.Background(), cfg, func(m ManifestPlace, s SchemaPlace) {
		ran = true
		seen = append(append(seen, m.IDs...), s.IDs...)
	})
	if want := got.Manifest.Err == nil && got.Schema.Err == nil; ran != want {
		t.Errorf("LoadWhile(%+v): while ran = %t, want %t (manifest error %v, schema error %v)", cfg, ran, want, got.Manifest.Err, got.Schema.Err)
	}
	if ran {
		if diff := cmp.Diff(append(append([]string(nil), got.Manifest.IDs...), got.Schema.IDs...), seen); diff != "" {
			t.Errorf("LoadWhile: while saw other places (-loaded +seen):\n%s", diff)
		}
	}
	return got
}

// checkLoaded compares what Load found with want.
func checkLoaded(t *testing.T, cfg Config, want loaded, got *Places) {
	t.Helper()
	sum := summarize(got)
	sum.SchemaSource = filepath.Base(sum.SchemaSource)
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("Load(%+v) (-want +got):\n%s", cfg, diff)
	}
	if (got.Err() != nil) != (want.ManifestErr || want.SchemaErr || want.DBErr) {
		t.Errorf("Load(...).Err() = %v, want an error only when a place failed", got.Err())
	}
	if _, err := os.Stat(cfg.DSN); (err == nil) != (want.Opened || want.Created) {
		t.Errorf("Load(...): database file exists = %v, want %v", err == nil, want.Opened)
	}
	if w := filepath.Join(cfg.PluginDir, pluginhost.ManifestFile); got.Manifest.Source() != w {
		t.Errorf("Manifest.Source() = %q, want %q", got.Manifest.Source(), w)
	}
	wantDB := "no database"
	if want.Opened {
		wantDB = "DB sqlite " + cfg.DSN
	}
	if s := got.String(); !strings.HasSuffix(s, wantDB) {
		t.Errorf("String() = %q, want it to end with %q", s, wantDB)
	}
}

// TestLoadWhileOverlapsTheDatabase: LoadWhile runs while as the database
// opens, not after: here the server answers nothing until while has run,
// and LoadWhile returns only once the database is done.
func TestLoadWhileOverlapsTheDatabase(t *testing.T) {
	dsn := storetest.Postgres(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := storetest.NewProxy(t, u.Host)
	proxy.Stall()
	p := newPlaces(t, withPrivate)
	ran, done := make(chan struct{}), make(chan *Places, 1)
	go func() {
		done <- LoadWhile(context.Background(), p.config(proxy.URL(t, dsn), false), func(ManifestPlace, SchemaPlace) { close(ran) })
	}()
	select {
	case <-ran:
	case <-time.After(30 * time.Second):
		t.Fatal("LoadWhile: while did not run while the database was opening")
	}
	select {
	case got := <-done:
		got.Close()
		t.Fatal("LoadWhile returned before the database answered")
	case <-time.After(100 * time.Millisecond):
	}
	proxy.Recover() // the stalled connection is dropped: the open may fail, but it ends
	got := <-done
	got.Close()
}

func prefixed(prefix string, ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = prefix + id
	}
	return out
}

// TestLoadPostgres: the loader reads and creates a Postgres database as it
// does a SQLite file, hiding the password in the source.
func TestLoadPostgres(t *testing.T) {
	dsn := storetest.Postgres(t)
	p := newPlaces(t, withPrivate)
	got := Load(context.Background(), p.config(dsn, false))
	defer got.Close()
	want := loaded{ManifestIDs: withPrivate, SchemaIDs: withPrivate, DBIDs: withPrivate, SchemaSource: p.schemaPath,
		Opened: true, Created: true, Constraint: true}
	if diff := cmp.Diff(want, summarize(got)); diff != "" {
		t.Errorf("Load(new postgres schema) (-want +got):\n%s", diff)
	}
	if w := "postgres " + store.Redact(dsn); got.DB.Source() != w {
		t.Errorf("DB.Source() = %q, want %q", got.DB.Source(), w)
	}

	// With a broken manifest a Postgres schema is not opened: migrating an
	// empty one would give it the built-in scorer set.
	empty := storetest.Postgres(t)
	if err := os.WriteFile(filepath.Join(p.pluginDir, pluginhost.ManifestFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := Load(context.Background(), p.config(empty, true))
	defer broken.Close()
	if broken.DB.Opened() || broken.DB.Skipped == "" || broken.Manifest.Err == nil {
		t.Errorf("Load(broken manifest, postgres) = DB opened %v, skipped %q, manifest error %v; want not opened, saying why",
			broken.DB.Opened(), broken.DB.Skipped, broken.Manifest.Err)
	}
}

// Environment of a loader child process (see TestLoadProcess).
const (
	childPluginDirEnv = "ASSAY_INVARIANT_CHILD_PLUGIN_DIR"
	childSchemaEnv    = "ASSAY_INVARIANT_CHILD_SCHEMA"
	childDSNEnv       = "ASSAY_INVARIANT_CHILD_DSN"
	childStartEnv     = "ASSAY_INVARIANT_CHILD_START"
	childResult       = "load-result "
)

// TestFirstRunRace (issue 12 item 9) runs the loader on one new database
// from several goroutines and two other OS processes at the same moment,
// with a manifest that has a private scorer. Every one must load the
// database, find the three places in agreement (never the built-in enum
// the migrations start with), and exactly one must have created it.
func TestFirstRunRace(t *testing.T) {
	if os.Getenv(childDSNEnv) != "" {
		t.Skip("running as a loader child")
	}
	const goroutines, processes = 6, 2
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			p := newPlaces(t, withPrivate)
			cfg := p.config(b.DSN(t), true)
			start := time.Now().Add(2 * time.Second)
			results := make([]string, goroutines+processes)
			var wg sync.WaitGroup
			for i := range processes {
				cmd := exec.Command(os.Args[0], "-test.run=^TestLoadProcess$", "-test.count=1", "-test.v")
				cmd.Env = append(os.Environ(), childPluginDirEnv+"="+cfg.PluginDir, childSchemaEnv+"="+cfg.SchemaPath,
					childDSNEnv+"="+cfg.DSN, childStartEnv+"="+strconv.FormatInt(start.UnixNano(), 10))
				wg.Add(1)
				go func() {
					defer wg.Done()
					out, err := cmd.CombinedOutput()
					results[goroutines+i] = childLine(string(out), err)
				}()
			}
			for i := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(time.Until(start))
					results[i] = loadLine(context.Background(), cfg)
				}()
			}
			wg.Wait()
			created := 0
			for i, r := range results {
				if strings.HasPrefix(r, "created ") {
					created++
					r = strings.TrimPrefix(r, "created ")
				}
				if r != "ok" {
					t.Errorf("opener %d (processes from %d): %s", i, goroutines, r)
				}
			}
			if created != 1 {
				t.Errorf("%d openers created the database, want exactly 1", created)
			}
		})
	}
}

// loadLine loads cfg and says how it went: "ok", "created ok", or the
// problem.
func loadLine(ctx context.Context, cfg Config) string {
	p := Load(ctx, cfg)
	defer p.Close()
	if err := p.Err(); err != nil {
		return "error: " + err.Error()
	}
	if !p.DB.Opened() {
		return "the database was not opened"
	}
	line := "ok"
	if r := p.Report(); !r.OK() {
		line = "startup check failed: " + strings.ReplaceAll(r.Error(), "\n", "; ")
	}
	if p.DB.Created() {
		line = "created " + line
	}
	return line
}

func childLine(out string, err error) string {
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), childResult); ok {
			return rest
		}
	}
	return fmt.Sprintf("child printed no result (%v):\n%s", err, out)
}

// TestLoadProcess is the child of TestFirstRunRace; it does nothing unless
// that test started it.
func TestLoadProcess(t *testing.T) {
	dsn := os.Getenv(childDSNEnv)
	if dsn == "" {
		t.Skip("only runs as a child of TestFirstRunRace")
	}
	at, err := strconv.ParseInt(os.Getenv(childStartEnv), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(time.Unix(0, at)))
	cfg := Config{PluginDir: os.Getenv(childPluginDirEnv), SchemaPath: os.Getenv(childSchemaEnv), DSN: dsn, CreateDB: true}
	fmt.Printf("%s%s\n", childResult, loadLine(context.Background(), cfg))
}
