package store

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"strings"
	"sync"
	"time"
)

// SQLite bulk writes (docs/storage.md, "Recording"): multi-row INSERTs of
// sqliteStatementRows rows, and of half, a quarter ... one row for what is
// left, each prepared once per connection and reused by every later
// transaction, so no SQL is built or parsed per chunk.

// sqliteStatementRows is how many rows one SQLite INSERT writes at most.
const sqliteStatementRows = 64

// insertText is a multi-row INSERT of one table, its text built for any
// number of rows.
type insertText struct {
	head, row, tail string // INSERT INTO t (cols) VALUES | (?, ...) | ON CONFLICT ...
}

func newInsertText(table, cols string, n int, tail string) insertText {
	return insertText{
		head: "INSERT INTO " + table + " (" + cols + ") VALUES ",
		row:  "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")",
		tail: " " + tail,
	}
}

// sql is the statement inserting rows rows.
func (t insertText) sql(rows int) string {
	var b strings.Builder
	b.WriteString(t.head)
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.row)
	}
	b.WriteString(t.tail)
	return b.String()
}

// The inserts of turns, blobs and pack tasks.
var (
	turnsInsert = newInsertText("company_eval_turns", turnColumns, turnColumnCount,
		"ON CONFLICT (run_id, label, epoch, attempt, revision) DO NOTHING")
	blobsInsert = newInsertText("company_eval_blobs", "sha256, kind, encoding, size, data, created_at", 6,
		"ON CONFLICT (sha256) DO NOTHING")
	packsInsert = newInsertText("company_eval_packs", "pack_sha256, company, label, scorer, weight, slice_tags, created_at", 7,
		`ON CONFLICT (pack_sha256, label) DO UPDATE SET
			company = excluded.company, scorer = excluded.scorer,
			weight = excluded.weight, slice_tags = excluded.slice_tags`)
)

// sqliteInsert is one table's multi-row INSERT for SQLite, prepared once
// per number of rows.
type sqliteInsert struct {
	text insertText

	mu    sync.Mutex
	stmts map[int]*sql.Stmt
}

func newSQLiteInsert(text insertText) *sqliteInsert {
	return &sqliteInsert{text: text, stmts: map[int]*sql.Stmt{}}
}

// sizes are the row counts of the statements that insert n rows: as many
// of sqliteStatementRows as fit, then halves.
func sizes(n int, f func(rows int) error) error {
	for n > 0 {
		rows := sqliteStatementRows
		for rows > n {
			rows /= 2
		}
		if err := f(rows); err != nil {
			return err
		}
		n -= rows
	}
	return nil
}

// chunkSizes are every row count sizes can give, largest first.
func chunkSizes() []int {
	var out []int
	for rows := sqliteStatementRows; rows > 0; rows /= 2 {
		out = append(out, rows)
	}
	return out
}

// prepareAll prepares, on db, a statement for every row count sizes can
// give: for a write whose row count is known only inside its transaction.
func (q *sqliteInsert) prepareAll(ctx context.Context, db *sql.DB) error {
	for _, rows := range chunkSizes() {
		if err := q.prepare(ctx, db, rows); err != nil {
			return err
		}
	}
	return nil
}

// prepare prepares, on db, the statements that insert n rows. It runs
// outside the transaction: preparing on db takes a connection of its own,
// which inside a transaction could wait for the transaction's.
func (q *sqliteInsert) prepare(ctx context.Context, db *sql.DB, n int) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return sizes(n, func(rows int) error {
		if _, ok := q.stmts[rows]; ok {
			return nil
		}
		st, err := db.PrepareContext(ctx, q.text.sql(rows))
		if err != nil {
			return err
		}
		q.stmts[rows] = st
		return nil
	})
}

// exec inserts n rows in tx with the statements prepare made; fill appends
// row i's values to args.
func (q *sqliteInsert) exec(ctx context.Context, tx *sql.Tx, n int, fill func(args []any, i int) []any) error {
	var args []any
	var inTx [sqliteStatementRows + 1]*sql.Stmt
	i := 0
	return sizes(n, func(rows int) error {
		if inTx[rows] == nil {
			q.mu.Lock()
			st := q.stmts[rows]
			q.mu.Unlock()
			inTx[rows] = tx.StmtContext(ctx, st)
		}
		args = args[:0]
		for j := i; j < i+rows; j++ {
			args = fill(args, j)
		}
		i += rows
		_, err := inTx[rows].ExecContext(ctx, args...)
		return err
	})
}

func (q *sqliteInsert) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, st := range q.stmts {
		st.Close()
	}
	clear(q.stmts)
}

// sqliteInserts are the store's SQLite bulk inserts.
type sqliteInserts struct {
	turns, blobs, packs *sqliteInsert
}

func newSQLiteInserts() *sqliteInserts {
	return &sqliteInserts{turns: newSQLiteInsert(turnsInsert), blobs: newSQLiteInsert(blobsInsert), packs: newSQLiteInsert(packsInsert)}
}

func (q *sqliteInserts) close() {
	q.turns.close()
	q.blobs.close()
	q.packs.close()
}

// sqliteRecord runs RecordTurns on SQLite: one transaction, the blobs
// first. The turns are valid (TurnRow.check).
func (s *Store) sqliteRecord(ctx context.Context, blobs []Blob, turns []TurnRow) error {
	what := turnsWhat
	if len(turns) == 0 {
		what = evidenceWhat
	}
	if err := s.sq.blobs.prepare(ctx, s.db, len(blobs)); err != nil {
		return wrapf(evidenceWhat, err)
	}
	if err := s.sq.turns.prepare(ctx, s.db, len(turns)); err != nil {
		return wrapf(turnsWhat, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return wrapf(what+": begin", err)
	}
	defer tx.Rollback()
	now := s.sqliteTime(s.now())
	keys := make([]byte, 0, len(blobs)*sha256.Size) // the chunk's keys, one allocation
	var bx rowBoxes
	err = s.sq.blobs.exec(ctx, tx, len(blobs), func(args []any, i int) []any {
		b := &blobs[i]
		start := len(keys)
		keys = appendBlobKey(keys, b.SHA256)
		return append(args, keys[start:len(keys):len(keys)], bx.str(0, b.Kind), bx.str(1, cmp.Or(b.Encoding, EncodingGzip)), b.Size, b.Data, now)
	})
	if err != nil {
		return wrapf(evidenceWhat, err)
	}
	bx = rowBoxes{}
	err = s.sq.turns.exec(ctx, tx, len(turns), func(args []any, i int) []any {
		return turns[i].appendArgs(args, now, &bx)
	})
	if err != nil {
		return wrapf(turnsWhat, err)
	}
	if err := tx.Commit(); err != nil {
		return wrapf(what+": commit", err)
	}
	s.wal.committed(recordBytes(blobs, turns))
	return nil
}

// rowBytes is about how many bytes a row's keys, hashes, numbers and times
// are, for counting committed rows towards walSyncBytes.
const rowBytes = 256

// recordBytes is about how many bytes of rows blobs and turns are.
func recordBytes(blobs []Blob, turns []TurnRow) int64 {
	n := int64(rowBytes * (len(blobs) + len(turns)))
	for i := range blobs {
		n += int64(len(blobs[i].Data))
	}
	for i := range turns {
		t := &turns[i]
		n += int64(len(t.Result) + len(t.Checks) + len(t.FailureTags) + len(t.Metrics))
	}
	return n
}

// sqliteTime is t as the bulk inserts bind it: the text the driver would
// write for it (modernc.org/sqlite formats a time.Time with String unless
// the DSN's _time_format, _time_integer_format or _timezone say
// otherwise), formatted once for every row of a transaction instead of
// once a row; t itself when the DSN sets one of those.
func (s *Store) sqliteTime(t time.Time) any {
	if !s.timeText {
		return t
	}
	return t.String()
}
