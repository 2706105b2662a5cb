package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"strconv"
	"strings"
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
	db      *sql.DB
	dialect Dialect
	now     func() time.Time
}

// SQLite connection settings: WAL so readers never block the writer, a busy
// timeout so two assay processes on one file wait for each other instead of
// failing, foreign keys on, and BEGIN IMMEDIATE so a transaction takes the
// write lock up front (a deferred one that upgrades can fail without waiting).
const (
	sqliteBusyTimeout = 5 * time.Second
	sqliteMaxConns    = 4
)

// IsPostgresURL reports whether dsn names a Postgres server rather than a
// SQLite file.
func IsPostgresURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Created reports whether opening the store created its schema: the
// database was empty, so its scorer CHECK is the migrations' built-in set,
// not yet the installed one.
func (s *Store) Created() bool { return s.created }

// Open opens the database dsn names — a SQLite file path, or a postgres:// or
// postgresql:// URL — and brings its schema up to date with the embedded
// migrations. Concurrent openers are safe: migrations run in one transaction
// (on Postgres under an advisory lock).
func Open(ctx context.Context, dsn string) (*Store, error) {
	if dsn == "" {
		return nil, errors.New("open database: empty path or URL")
	}
	s := &Store{now: func() time.Time { return time.Now().UTC() }}
	if IsPostgresURL(dsn) {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("open database: parse postgres url: %w", err)
		}
		s.db = stdlib.OpenDB(*cfg)
		s.db.SetMaxOpenConns(8)
		s.db.SetMaxIdleConns(8)
		s.db.SetConnMaxIdleTime(5 * time.Minute)
		s.dialect = Postgres
	} else {
		db, err := sql.Open("sqlite", sqliteDSN(dsn))
		if err != nil {
			return nil, fmt.Errorf("open database: %w", err)
		}
		s.db = db
		if isSQLiteMemory(dsn) {
			// Every connection to :memory: is its own database.
			s.db.SetMaxOpenConns(1)
		} else {
			s.db.SetMaxOpenConns(sqliteMaxConns)
			s.db.SetMaxIdleConns(sqliteMaxConns)
		}
		s.dialect = SQLite
	}
	if err := s.db.PingContext(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("open %s database %s: %w", s.dialect, Redact(dsn), err)
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("open %s database %s: %w", s.dialect, Redact(dsn), err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

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

func sqliteDSN(path string) string {
	q := []string{
		"_pragma=busy_timeout(" + strconv.FormatInt(sqliteBusyTimeout.Milliseconds(), 10) + ")",
		"_pragma=foreign_keys(1)",
		"_pragma=synchronous(NORMAL)",
		"_txlock=immediate",
	}
	if !isSQLiteMemory(path) {
		q = append(q, "_pragma=journal_mode(WAL)")
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + strings.Join(q, "&")
}

func isSQLiteMemory(path string) bool {
	return path == ":memory:" || strings.HasPrefix(path, "file::memory:") || strings.Contains(path, "mode=memory")
}

// Redact hides the password of a Postgres URL, for messages.
func Redact(dsn string) string {
	if !IsPostgresURL(dsn) {
		return dsn
	}
	scheme, rest, _ := strings.Cut(dsn, "://")
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return dsn
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return dsn
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}
