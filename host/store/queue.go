package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// riverLockID is the advisory lock key that serialises processes
// installing River's schema ("river" in ASCII).
const riverLockID = 0x7269766572

// Statement is one SQL statement with its arguments, in the store's
// dialect, for a caller that runs it in its own transaction (the queue
// worker records turns in the transaction that completes its job,
// docs/scale.md).
type Statement struct {
	SQL  string
	Args []any
}

// TurnInserts are the statements InsertTurns runs, to run in another
// transaction: turns already stored are skipped.
func (s *Store) TurnInserts(turns []TurnRow) ([]Statement, error) {
	now := s.now()
	if s.dialect == Postgres {
		for i := range turns {
			if err := turns[i].check(); err != nil {
				return nil, fmt.Errorf("store turns: %w", err)
			}
		}
		var out []Statement
		for _, st := range pgTurnStatements(turns, now) {
			out = append(out, Statement{SQL: st.upsert, Args: st.args()}) // in another transaction: no retry

		}
		return out, nil
	}
	var out []Statement
	for start := 0; start < len(turns); start += turnsPerStatement {
		n := min(turnsPerStatement, len(turns)-start)
		args := make([]any, 0, n*turnColumnCount)
		for i := start; i < start+n; i++ {
			a, err := turns[i].args(now)
			if err != nil {
				return nil, fmt.Errorf("store turns: %w", err)
			}
			args = append(args, a...)
		}
		out = append(out, Statement{SQL: s.insertTurnsSQL(n), Args: args})
	}
	return out, nil
}

// OpenPool opens a pgx pool on the Postgres database dsn names, with the
// same connection settings (search_path included) as the store's own
// connections, and installs or upgrades River's schema there
// (docs/storage.md).
func OpenPool(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	if !IsPostgresURL(dsn) {
		return nil, fmt.Errorf("open queue: %s is not a postgres:// URL: the queue needs Postgres", Redact(dsn))
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open queue: parse postgres url: %w", RedactError(err, dsn))
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open queue %s: %w", Redact(dsn), RedactError(err, dsn))
	}
	if err := MigrateRiver(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// MigrateRiver installs or upgrades River's tables with rivermigrate (each
// version in its own transaction, as River's enum changes require), while
// holding an advisory lock so concurrent workers agree.
func MigrateRiver(ctx context.Context, pool *pgxpool.Pool) error {
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(riverLockID)); err != nil {
		return fmt.Errorf("migrate river: lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(riverLockID))
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	return nil
}
