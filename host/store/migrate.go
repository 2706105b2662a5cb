package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// migrationFS holds the versioned migrations, one directory per dialect. A
// file is NNN_name.sql; every file is applied once, in name order, and
// recorded in schema_migrations.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFS embed.FS

// migrateLockID is the Postgres advisory lock key that serialises migrating
// processes ("assay" in ASCII).
const migrateLockID = 0x6173736179

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the dialect's migrations in name order.
func migrations(d Dialect) ([]migration, error) {
	dir := "migrations/" + d.String()
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".sql") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	out := make([]migration, 0, len(names))
	seen := map[int]string{}
	for _, name := range names {
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s/%s: name must be NNN_name.sql", dir, name)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migration %s/%s: version %d already used by %s", dir, name, v, prev)
		}
		seen[v] = name
		body, err := fs.ReadFile(migrationFS, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		out = append(out, migration{version: v, name: name, sql: string(body)})
	}
	return out, nil
}

// migrate applies every migration the database has not recorded, all in one
// transaction that holds the write lock, so a concurrent opener either sees
// none of them or all. When the database was empty and scorerEnum is not
// empty, the same transaction makes scorerEnum its scorer CHECK, so no
// opener ever sees the new database with the built-in enum.
func (s *Store) migrate(ctx context.Context, scorerEnum []string) error {
	ms, err := migrations(s.dialect)
	if err != nil {
		return err
	}
	var enum []string
	if len(scorerEnum) > 0 {
		if enum, err = normalizeIDs(scorerEnum); err != nil {
			return fmt.Errorf("migrate: scorer enum of a new database: %w", err)
		}
	}
	// Fast path: an up-to-date database needs no write lock.
	if applied, err := s.appliedVersions(ctx, s.db); err == nil && coversAll(applied, ms) {
		return nil
	}
	return s.applyMigrations(ctx, ms, enum)
}

// applyMigrations applies ms the database has not recorded. On Postgres
// they go in one round trip; if that fails, they are applied again one by
// one in a new transaction, to say which failed.
func (s *Store) applyMigrations(ctx context.Context, ms []migration, enum []string) error {
	err := s.migrateTx(ctx, ms, enum, s.dialect == Postgres)
	if errors.Is(err, errScript) && ctx.Err() == nil {
		err = s.migrateTx(ctx, ms, enum, false)
	}
	return err
}

// errScript: the migration script failed (migrateTx with script).
var errScript = errors.New("migration script failed")

// migrateTx applies the migrations the database has not recorded, in one
// transaction holding the write lock: as one script (migrationScript) or
// one statement each.
func (s *Store) migrateTx(ctx context.Context, ms []migration, enum []string, script bool) error {
	tx, err := s.beginLocked(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.schemaMigrationsSQL()); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	applied, err := s.appliedVersions(ctx, tx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	created := len(applied) == 0
	var pending []migration
	for _, m := range ms {
		if !applied[m.version] {
			pending = append(pending, m)
		}
	}
	if !created && len(pending) > 0 && s.upgrading != nil {
		names := make([]string, len(pending))
		for i, m := range pending {
			names[i] = m.name
		}
		s.upgrading(names)
		s.upgrading = nil // a Postgres script that fails is applied again one by one: one notice
	}
	if script && len(pending) > 1 {
		if _, err := tx.ExecContext(ctx, s.migrationScript(pending)); err != nil {
			return fmt.Errorf("%w: %w", errScript, err)
		}
	} else if err := s.applyEach(ctx, tx, pending); err != nil {
		return err
	}
	if created && enum != nil {
		if err := s.writeScorerEnum(ctx, tx, enum); err != nil {
			return fmt.Errorf("migrate: scorer enum of a new database: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	s.created = created
	return nil
}

// applyEach applies and records each migration, one statement each.
func (s *Store) applyEach(ctx context.Context, tx *sql.Tx, pending []migration) error {
	for _, m := range pending {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migrate: apply %s: %w", m.name, err)
		}
		if _, err := tx.ExecContext(ctx, s.Rebind("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"),
			m.version, m.name, s.now()); err != nil {
			return fmt.Errorf("migrate: record %s: %w", m.name, err)
		}
	}
	return nil
}

// migrationScript is the pending migrations and the rows recording them
// as one Postgres script, sent in one round trip (a script takes no
// parameters, so the values are literals: numbers, file names and a
// timestamp).
func (s *Store) migrationScript(pending []migration) string {
	var b strings.Builder
	at := s.now().Format(time.RFC3339Nano)
	for _, m := range pending {
		b.WriteString(m.sql)
		fmt.Fprintf(&b, "\n;\nINSERT INTO schema_migrations (version, name, applied_at) VALUES (%d, %s, '%s');\n",
			m.version, quoteLiteral(m.name), at)
	}
	return b.String()
}

// quoteLiteral is s as a SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// schemaMigrationsSQL creates schema_migrations if it is missing.
func (s *Store) schemaMigrationsSQL() string {
	q := `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TIMESTAMP NOT NULL)`
	if s.dialect == Postgres {
		q = strings.Replace(q, "TIMESTAMP", "TIMESTAMPTZ", 1)
	}
	return q
}

// beginLocked begins a transaction that holds the schema write lock until it
// ends: on SQLite every transaction is BEGIN IMMEDIATE (see sqliteDSN), on
// Postgres it takes the advisory lock migrateLockID, which migrations and
// scorer enum changes share.
func (s *Store) beginLocked(ctx context.Context) (*sql.Tx, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	if s.dialect == Postgres {
		// A literal key: a statement without parameters is one round trip.
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock("+strconv.FormatInt(migrateLockID, 10)+")"); err != nil {
			tx.Rollback()
			return nil, fmt.Errorf("lock: %w", err)
		}
	}
	return tx, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (s *Store) appliedVersions(ctx context.Context, q querier) (map[int]bool, error) {
	rows, err := q.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	defer rows.Close()
	out := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
		out[v] = true
	}
	return out, rows.Err()
}

func coversAll(applied map[int]bool, ms []migration) bool {
	for _, m := range ms {
		if !applied[m.version] {
			return false
		}
	}
	return true
}

// Migrations returns the versions recorded in schema_migrations, in order.
func (s *Store) Migrations(ctx context.Context) ([]int, error) {
	applied, err := s.appliedVersions(ctx, s.db)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(applied))
	for v := range applied {
		out = append(out, v)
	}
	sort.Ints(out)
	return out, nil
}
