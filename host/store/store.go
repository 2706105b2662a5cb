package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers database/sql driver "sqlite"
)

// Dialect is the SQL dialect of the database behind a Store.
type Dialect int

const (
	SQLite Dialect = iota + 1
	Postgres
)

func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	default:
		return "dialect(" + strconv.Itoa(int(d)) + ")"
	}
}

// Store is an open assay database.
type Store struct {
	created bool // this Open created the schema (the database was empty)
	retries int  // how many times Open retried a busy SQLite database
	db      *sql.DB
	dialect Dialect
	now     func() time.Time
	sq      *sqliteInserts // SQLite's prepared bulk inserts
	wal     *walSyncer     // syncs a SQLite file's WAL as chunks commit; nil otherwise
	// timeText: the SQLite driver writes a time.Time as its String(), so
	// the bulk inserts format their one time once (sqliteTime). False when
	// the DSN sets one of the driver's time parameters.
	timeText bool
	// pgConflicted marks the tables whose plain bulk insert has hit a
	// stored key: their writes use the ON CONFLICT form from then on
	// (pgInsertTurns).
	pgConflicted [pgTables]atomic.Bool
	// upgrading is told the migrations an existing database lacks, once
	// (WithUpgradeNotice); nil after.
	upgrading func(migrations []string)
}

// SQLite connection settings: WAL so readers never block the writer, a busy
// timeout so two assay processes on one file wait for each other instead of
// failing, foreign keys on, and BEGIN IMMEDIATE so a transaction takes the
// write lock up front (a deferred one that upgrades can fail without waiting).
// When the busy timeout runs out while opening, Open tries again, for at
// most sqliteOpenBudget in all.
const (
	sqliteBusyTimeout = 5 * time.Second
	sqliteOpenBudget  = 30 * time.Second
	sqliteMaxConns    = 4
)

// Option configures Open.
type Option func(*options)

type options struct {
	scorerEnum  []string
	busyTimeout time.Duration
	openBudget  time.Duration
	timeout     time.Duration // Postgres timeouts (WithTimeout)
	timeoutSet  bool
	upgrading   func(migrations []string) // WithUpgradeNotice
}

// WithScorerEnum makes a database that this Open creates start with ids as
// its scorer CHECK instead of the migrations' built-in set. The CHECK is
// written in the migration transaction, so a concurrent opener never sees
// the new database with any other enum. An existing database is not changed
// (assay scorers sync does that). Empty ids leave the built-in set.
func WithScorerEnum(ids []string) Option {
	return func(o *options) { o.scorerEnum = ids }
}

// WithUpgradeNotice has Open call notice, before it applies them, with the
// file names of the migrations an existing database lacks: an upgrade runs
// once, but on a large database it can take minutes (011_blob_keys copies
// the evidence table), and whoever waits should be told why. A database
// Open creates is not an upgrade and gives no notice.
func WithUpgradeNotice(notice func(migrations []string)) Option {
	return func(o *options) { o.upgrading = notice }
}

// withSQLiteTimeouts sets the SQLite busy timeout and the total time Open
// spends retrying a busy database; tests shorten them.
func withSQLiteTimeouts(busy, budget time.Duration) Option {
	return func(o *options) { o.busyTimeout, o.openBudget = busy, budget }
}

// Created reports whether opening the store created its schema: the
// database was empty, so its scorer CHECK is the set WithScorerEnum gave, or
// the migrations' built-in set without it.
func (s *Store) Created() bool { return s.created }

// OpenRetries reports how many times Open found a SQLite database busy for
// longer than the busy timeout and tried again before it succeeded.
func (s *Store) OpenRetries() int { return s.retries }

// Open opens the database dsn names — a SQLite file path, or a postgres:// or
// postgresql:// URL — and brings its schema up to date with the embedded
// migrations. Concurrent openers are safe: the migrations, and the scorer
// CHECK WithScorerEnum asks for, are applied in one transaction that holds
// the write lock (on Postgres an advisory lock, on SQLite BEGIN IMMEDIATE),
// and a SQLite database still busy after the busy timeout is tried again.
// docs/storage.md describes the rules.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	if dsn == "" {
		return nil, errors.New("open database: empty path or URL")
	}
	o := options{busyTimeout: sqliteBusyTimeout, openBudget: sqliteOpenBudget}
	for _, opt := range opts {
		opt(&o)
	}
	if IsKeywordDSN(dsn) {
		return nil, fmt.Errorf("open database %s: %w", Redact(dsn), ErrKeywordDSN)
	}
	if IsPostgresURL(dsn) {
		s, err := openPostgres(ctx, dsn, o)
		return s, RedactError(err, dsn)
	}
	return openSQLite(ctx, dsn, o)
}

func newStore(db *sql.DB, d Dialect) *Store {
	s := &Store{db: db, dialect: d, now: func() time.Time { return time.Now().UTC() }}
	if d == SQLite {
		s.sq = newSQLiteInserts()
	}
	return s
}

func openPostgres(ctx context.Context, dsn string, o options) (*Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: parse postgres url: %w", err)
	}
	applyTimeouts(cfg, o)
	s := newStore(stdlib.OpenDB(*cfg), Postgres)
	s.db.SetMaxOpenConns(8)
	s.db.SetMaxIdleConns(8)
	s.db.SetConnMaxIdleTime(5 * time.Minute)
	if err := s.start(ctx, o); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("open %s database %s: %w", s.dialect, Redact(dsn), err)
	}
	return s, nil
}

// dsnQuery is the query of dsn as the driver decodes it: url.ParseQuery of
// what follows the first '?'; nil without one.
func dsnQuery(dsn string) (url.Values, error) {
	pos := strings.IndexRune(dsn, '?')
	if pos < 0 {
		return nil, nil
	}
	return url.ParseQuery(dsn[pos+1:])
}

// sqliteTimeText reports whether the driver, opened with dsn, writes a
// time.Time as its String(): whether no query parameter of dsn (dsnQuery)
// is one of its time parameters (_time_format, _time_integer_format,
// _timezone). A query it cannot decode is taken to set one.
func sqliteTimeText(dsn string) bool {
	q, err := dsnQuery(dsn)
	if err != nil {
		return false
	}
	for k := range q {
		if strings.HasPrefix(k, "_time") {
			return false
		}
	}
	return true
}

// openSQLite opens and migrates a SQLite database, trying again while it is
// busy (another process holds the write lock past the busy timeout, or is
// switching a new file to WAL) until o.openBudget is spent.
func openSQLite(ctx context.Context, dsn string, o options) (*Store, error) {
	deadline := time.Now().Add(o.openBudget)
	wait := 50 * time.Millisecond
	if err := checkURLPragmas(dsn); err != nil {
		return nil, fmt.Errorf("open sqlite database %s: %w", Redact(dsn), err)
	}
	full := sqliteDSN(dsn, o.busyTimeout)
	timeText := sqliteTimeText(full)
	for attempt := 0; ; attempt++ {
		db, err := sql.Open("sqlite", full)
		if err != nil {
			return nil, fmt.Errorf("open database: %w", err)
		}
		s := newStore(db, SQLite)
		s.retries = attempt
		s.timeText = timeText
		if isSQLiteMemory(dsn) {
			// Every connection to :memory: is its own database.
			s.db.SetMaxOpenConns(1)
		} else {
			s.db.SetMaxOpenConns(sqliteMaxConns)
			s.db.SetMaxIdleConns(sqliteMaxConns)
		}
		err = s.start(ctx, o)
		if err == nil {
			if file := sqliteMainFile(ctx, s.db); file != "" {
				// The syncer holds a connection of its own for its
				// checkpoints: the pool keeps sqliteMaxConns for the rest.
				s.db.SetMaxOpenConns(sqliteMaxConns + 1)
				s.wal = newWALSyncer(ctx, file, s.db)
			}
			return s, nil
		}
		s.db.Close()
		if !isBusy(err) || time.Now().Add(wait).After(deadline) {
			if isBusy(err) {
				err = fmt.Errorf("%w (tried %d times over %s)", err, attempt+1, o.openBudget)
			}
			return nil, fmt.Errorf("open %s database %s: %w", SQLite, dsn, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("open %s database %s: %w (while waiting to retry: %w)", SQLite, dsn, ctx.Err(), err)
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// start checks the connection and migrates.
func (s *Store) start(ctx context.Context, o options) error {
	if err := s.db.PingContext(ctx); err != nil {
		return err
	}
	s.upgrading = o.upgrading
	return s.migrate(ctx, o.scorerEnum)
}

// isBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED (in
// any extended form): another connection holds the lock.
func isBusy(err error) bool {
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return false
	}
	switch coded.Code() & 0xff {
	case sqliteBusy, sqliteLocked:
		return true
	}
	return false
}

// SQLite's primary result codes for a held lock.
const (
	sqliteBusy   = 5
	sqliteLocked = 6
)

// Close closes the database.
func (s *Store) Close() error {
	s.wal.stop()
	if s.sq != nil {
		s.sq.close()
	}
	return s.db.Close()
}

// DB returns the underlying database, for packages that keep their own tables
// in it (they write queries with ? placeholders and pass them through Rebind).
func (s *Store) DB() *sql.DB { return s.db }

// Dialect returns the database's SQL dialect.
func (s *Store) Dialect() Dialect { return s.dialect }

// Rebind rewrites ? placeholders to $1, $2, ... for Postgres; for SQLite it
// returns query unchanged. A ? inside a quoted string or identifier is left
// alone.
func (s *Store) Rebind(query string) string {
	if s.dialect != Postgres {
		return query
	}
	return rebindDollar(query)
}

func rebindDollar(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		ch := query[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(ch)
	}
	return b.String()
}

// sqliteCacheKiB is each connection's page cache in KiB (SQLite's
// cache_size, negative): 1,000 rather than SQLite's 2,000. The driver's
// allocator puts each cached page (a page and SQLite's ~200-byte header)
// in a slot of twice the page size, so the default cache costs about
// 3.5 MB resident where SQLite counts 2 MB, whatever the page size;
// 1,000 KiB still holds a 10,000-turn run's indexes (the same page reads),
// and past that the random blob keys miss either size
// (docs/performance.md, "Verifying many small turns", ninth round).
// A cache_size given in the database URL's query is kept.
const sqliteCacheKiB = 1000

// sqlitePageSize is the page size of a database the store creates; an
// existing database keeps the one it was made with (SQLite reads any),
// and a page_size in the database URL's query is kept. A turn row of a
// short answer is about 1.45 KB (its checks and result, its metrics and
// small trace, four SHA-256s), so a 4 KiB page holds two and leaves a
// quarter of itself unused, where an 8 KiB page holds five: the 10,000
// answers' database is 19.7 MB instead of 23.7, and the run's one writer,
// which sets its pace, writes a sixth fewer pages (docs/storage.md,
// "Recording"). It is set before WAL mode, which fixes it.
const sqlitePageSize = 8192

// sqliteAutocheckpointPages is SQLite's wal_autocheckpoint: the WAL's size
// in pages at which the commit that passes it checkpoints the WAL (SQLite's
// default is 1,000). A checkpoint only copies; the next write transaction
// starts the WAL again from its beginning once a checkpoint has copied all
// of it, which the commit's own always does (nothing else commits while
// it runs). On Linux the store's WAL syncer checkpoints every few megabytes
// of rows beside the recorder, so this commit comes once every 128 MiB of
// pages and finds only what came after the last of those to copy and
// fsync; elsewhere it is SQLite's only checkpoint before the close, and
// stays at 32 MiB, where each copies a page once however many commits
// rewrote it (docs/storage.md, "Recording"). The counts are of the store's
// own pages (sqlitePageSize); a database made with 4 KiB pages
// checkpoints at half those sizes.
var sqliteAutocheckpointPages = autocheckpointPages(runtime.GOOS)

func autocheckpointPages(goos string) int {
	if goos == "linux" {
		return 128 << 20 / sqlitePageSize
	}
	return 32 << 20 / sqlitePageSize
}

func sqliteDSN(path string, busyTimeout time.Duration) string {
	q := []string{
		"_pragma=busy_timeout(" + strconv.FormatInt(busyTimeout.Milliseconds(), 10) + ")",
		"_pragma=foreign_keys(1)",
		"_pragma=synchronous(NORMAL)",
		"_pragma=temp_store(MEMORY)",
		"_txlock=immediate",
	}
	given, _ := dsnQuery(path) // a query the driver cannot decode fails its open
	if _, ok := urlPragma(given, "cache_size"); !ok {
		q = append(q, "_pragma=cache_size(-"+strconv.Itoa(sqliteCacheKiB)+")")
	}
	if _, ok := urlPragma(given, "wal_autocheckpoint"); !ok {
		q = append(q, "_pragma=wal_autocheckpoint("+strconv.Itoa(sqliteAutocheckpointPages)+")")
	}
	if !isSQLiteMemory(path) {
		// The driver runs the _pragma list first and the _journal_mode
		// key after it, so the page size comes before WAL fixes it. A
		// journal mode given as that key (or _journal) is kept, as it was
		// when WAL came in the _pragma list and the key ran after it.
		if _, ok := urlPragma(given, "page_size"); !ok {
			q = append(q, "_pragma=page_size("+strconv.Itoa(sqlitePageSize)+")")
		}
		if !given.Has("_journal_mode") && !given.Has("_journal") {
			q = append(q, "_journal_mode=WAL")
		}
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + strings.Join(q, "&")
}

// urlPragma is the value a _pragma of the database URL's query q
// (dsnQuery) sets name to, and whether one does: a value in parentheses or
// after "=", the name in any case, with or without a schema
// ("main.cache_size(-100)"). The store's own setting of it is then left
// out: the driver runs the _pragma list sorted, so both given would leave
// whichever sorts last.
func urlPragma(q url.Values, name string) (value string, ok bool) {
	for _, v := range q["_pragma"] {
		v = strings.ToLower(strings.TrimSpace(v))
		i := strings.IndexAny(v, "(=")
		if i < 0 {
			continue // reads the value, sets nothing
		}
		key := strings.TrimSpace(v[:i])
		if _, after, ok := strings.Cut(key, "."); ok {
			key = after
		}
		if key == name {
			value = v[i+1:]
			if v[i] == '(' {
				value = strings.TrimSuffix(value, ")")
			}
			return strings.TrimSpace(value), true
		}
	}
	return "", false
}

// checkURLPragmas refuses a database URL that sets one of the pragmas the
// store would otherwise set itself (cache_size, wal_autocheckpoint,
// page_size) to anything but an integer: SQLite would take it as 0 without
// a word (no WAL checkpoint in commits, SQLite's smallest page cache, its
// default page size).
func checkURLPragmas(dsn string) error {
	q, err := dsnQuery(dsn)
	if err != nil {
		return nil // the driver says what is wrong with it
	}
	var errs []error
	for _, name := range []string{"cache_size", "wal_autocheckpoint", "page_size"} {
		if v, ok := urlPragma(q, name); ok {
			if _, err := strconv.Atoi(v); err != nil {
				errs = append(errs, fmt.Errorf("_pragma %s = %q: want an integer", name, v))
			}
		}
	}
	return errors.Join(errs...)
}

func isSQLiteMemory(path string) bool {
	return path == ":memory:" || strings.HasPrefix(path, "file::memory:") || strings.Contains(path, "mode=memory")
}
