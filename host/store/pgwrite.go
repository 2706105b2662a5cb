package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Postgres bulk writes (docs/storage.md, "Recording"). New rows go in with
// COPY … FROM STDIN in the binary format, one COPY a table, the rows
// encoded straight from the Go values as the driver reads them (pgCopy):
// no SQL is built per row, nothing is parsed or planned per chunk, and the
// server inserts a page's rows at a time. A chunk's COPYs are one simple
// query ("COPY …; COPY …"), which Postgres runs as one transaction, with
// every COPY's data sent after it: one round trip a chunk (pgCopyRun).
//
// Rows that may already be stored go in with an INSERT … SELECT … FROM
// unnest(…) ON CONFLICT, one array per column, so its text is the same
// whatever the number of rows: it is parsed and planned once per
// connection and the values travel in binary. A chunk's statements are
// sent as one pipelined batch, which Postgres runs as one implicit
// transaction: one round trip a chunk. A chunk larger than pgBatchBytes is
// sent in several batches inside an explicit transaction, so memory stays
// bounded by the batch rather than the chunk.

// Each table's write comes in three forms: a COPY, a plain INSERT, and the
// same INSERT with its ON CONFLICT clause (a row already stored is left as
// it is; a pack task is updated). The ON CONFLICT form is what the write
// means; COPY, which cannot skip a stored key, is tried first because
// almost every row assay writes is new, and Postgres checks each row of an
// ON CONFLICT insert against the key before and after inserting it: the
// plain forms take about a quarter less server CPU for turns and two
// fifths less for blobs, COPY a seventh less again, and far less of
// assay's (docs/performance.md, "Postgres"). A write that hits a stored
// key fails as a whole (nothing of it is kept) and is run again in the ON
// CONFLICT form, which the store then keeps using for that table: a rerun
// over stored evidence conflicts on every chunk, and pays the failed
// attempt once. A write of several tables of which some have conflicted
// sends the others as plain INSERTs in the same batch.

// pgInsertTurns inserts turns from arrays; $22 is created_at. Integers
// travel as bigint, so one out of the column's range is an error, as it
// was row by row.
const pgInsertTurns = `INSERT INTO company_eval_turns (` + turnColumns + `)
	SELECT run_id, label, attempt, status, process_score, kpi_score, turn_score, checks, failure_tags,
		scorer_id, scorer_sha256, state_before_sha256, state_after_sha256, result, $22, revision, input_key, epoch,
		trace_sha256, metrics_sha256, metrics, trace
	FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::float8[], $6::float8[], $7::float8[],
		$8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::bigint[],
		$16::text[], $17::bigint[], $18::text[], $19::text[], $20::bytea[], $21::bytea[])
		AS u(run_id, label, attempt, status, process_score, kpi_score, turn_score, checks, failure_tags,
		scorer_id, scorer_sha256, state_before_sha256, state_after_sha256, result, revision, input_key, epoch,
		trace_sha256, metrics_sha256, metrics, trace)`

// pgUpsertTurns is pgInsertTurns leaving turns already stored as they are.
const pgUpsertTurns = pgInsertTurns + `
	ON CONFLICT (run_id, label, epoch, attempt, revision) DO NOTHING`

// pgBlobColumns and pgPackColumns are the columns the bulk writes of blobs
// and pack tasks fill, in the order of their values, as turnColumns is for
// turns.
const (
	pgBlobColumns = `sha256, kind, encoding, size, data, created_at`
	pgPackColumns = `pack_sha256, company, label, scorer, weight, slice_tags, created_at`
)

// pgInsertBlobs inserts blobs from arrays; $6 is created_at.
const pgInsertBlobs = `INSERT INTO company_eval_blobs (` + pgBlobColumns + `)
	SELECT sha256, kind, encoding, size, data, $6
	FROM unnest($1::bytea[], $2::text[], $3::text[], $4::bigint[], $5::bytea[]) AS u(sha256, kind, encoding, size, data)`

// pgUpsertBlobs is pgInsertBlobs leaving blobs already stored as they are.
const pgUpsertBlobs = pgInsertBlobs + `
	ON CONFLICT (sha256) DO NOTHING`

// pgInsertPackTasks inserts pack tasks from arrays; $7 is created_at. The
// rows must not repeat a (pack sha256, label).
const pgInsertPackTasks = `INSERT INTO company_eval_packs (` + pgPackColumns + `)
	SELECT pack_sha256, company, label, scorer, weight, slice_tags, $7
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::text[])
		AS u(pack_sha256, company, label, scorer, weight, slice_tags)`

// pgUpsertPackTasks is pgInsertPackTasks updating tasks already stored.
const pgUpsertPackTasks = pgInsertPackTasks + `
	ON CONFLICT (pack_sha256, label) DO UPDATE SET
		company = excluded.company, scorer = excluded.scorer,
		weight = excluded.weight, slice_tags = excluded.slice_tags`

// pgTable names a table the bulk writes insert into; it indexes
// Store.pgConflicted.
type pgTable int

const (
	pgTurns pgTable = iota
	pgBlobs
	pgPacks
	pgTables
)

// pgBatchBytes bounds the bytes of values one pipelined batch carries, and
// pgStatementRows the rows of one statement; pgRowOverhead is what a row's
// fixed-size values count for.
const (
	pgBatchBytes    = 8 << 20
	pgStatementRows = 1000
	pgRowOverhead   = 64
)

// What a failed write reports as, as before bulk writes.
const (
	turnsWhat     = "store turns"
	evidenceWhat  = "store evidence"
	packTasksWhat = "store pack tasks"
)

// The defaults of the JSON text columns.
const (
	emptyJSONArray  = "[]"
	emptyJSONObject = "{}"
)

// pgStatement is one statement of a batch and what its failure is reported
// as: sql is the plain insert, upsert the same with its ON CONFLICT clause,
// args makes their arguments; copy is the same rows as a COPY.
type pgStatement struct {
	what   string
	table  pgTable
	sql    string
	upsert string
	args   func() []any
	copy   pgCopy
	bytes  int
}

// pgTurnStatements splits turns into unnest inserts of at most
// pgStatementRows rows and about pgBatchBytes bytes each. The turns are
// valid (TurnRow.check).
func pgTurnStatements(turns []TurnRow, now time.Time) []pgStatement {
	return pgSplit(turns, (*TurnRow).size, func(chunk []TurnRow, size int) pgStatement {
		return pgStatement{what: turnsWhat, table: pgTurns, sql: pgInsertTurns, upsert: pgUpsertTurns,
			args: func() []any { return pgTurnArgs(chunk, now) }, copy: pgTurnCopy(chunk, now), bytes: size}
	})
}

// pgSplit makes a statement of each run of rows of at most pgStatementRows
// rows and about pgBatchBytes bytes (size: one row's), in order.
func pgSplit[T any](rows []T, size func(*T) int, stmt func(chunk []T, size int) pgStatement) []pgStatement {
	var out []pgStatement
	for start := 0; start < len(rows); {
		n, bytes := 0, 0
		for start+n < len(rows) && n < pgStatementRows && (n == 0 || bytes < pgBatchBytes) {
			bytes += size(&rows[start+n])
			n++
		}
		out = append(out, stmt(rows[start:start+n], bytes))
		start += n
	}
	return out
}

// size is about how many bytes a turn's values take.
func (t *TurnRow) size() int {
	return pgRowOverhead + len(t.Label) + len(t.Status) + len(t.Checks) + len(t.FailureTags) + len(t.ScorerID) +
		len(t.ScorerSHA256) + len(t.StateBeforeSHA256) + len(t.StateAfterSHA256) + len(t.Result) + len(t.InputKey) +
		len(t.TraceSHA256) + len(t.MetricsSHA256) + len(t.Metrics) + len(t.Trace)
}

// pgTurnArgs are the column arrays of pgInsertTurns.
func pgTurnArgs(turns []TurnRow, now time.Time) []any {
	n := len(turns)
	var (
		runID                              = make([]int64, n)
		attempt, revision, epoch           = make([]int64, n), make([]int64, n), make([]int64, n)
		process, kpi, score                = make([]*float64, n), make([]*float64, n), make([]*float64, n)
		label, status, scorerID, scorerSHA = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		before, after, inputKey            = make([]string, n), make([]string, n), make([]string, n)
		trace, metrics                     = make([]string, n), make([]string, n)
		metricsRow, traceRow               = make([][]byte, n), make([][]byte, n)
		checks, tags, result               = make([][]byte, n), make([][]byte, n), make([][]byte, n)
	)
	for i := range turns {
		t := &turns[i]
		runID[i], label[i], attempt[i], status[i] = t.RunID, t.Label, int64(t.Attempt), t.Status
		process[i], kpi[i], score[i] = t.ProcessScore, t.KPIScore, t.TurnScore
		checks[i], tags[i] = jsonBytes(t.Checks, emptyArrayBytes), jsonBytes(t.FailureTags, emptyArrayBytes)
		scorerID[i], scorerSHA[i], before[i], after[i] = t.ScorerID, t.ScorerSHA256, t.StateBeforeSHA256, t.StateAfterSHA256
		result[i], revision[i], inputKey[i], epoch[i] = jsonBytes(t.Result, emptyObjectBytes), int64(max(t.Revision, 1)), t.InputKey, int64(max(t.Epoch, 1))
		trace[i], metrics[i], metricsRow[i] = t.TraceSHA256, t.MetricsSHA256, jsonBytes(t.Metrics, emptyBytes)
		traceRow[i] = jsonBytes(t.Trace, emptyBytes)
	}
	return []any{runID, label, attempt, status, process, kpi, score, checks, tags, scorerID, scorerSHA,
		before, after, result, revision, inputKey, epoch, trace, metrics, metricsRow, traceRow, now}
}

var (
	emptyArrayBytes  = []byte(emptyJSONArray)
	emptyObjectBytes = []byte(emptyJSONObject)
	emptyBytes       = []byte{} // the metrics column's default: empty, never NULL
)

// jsonBytes is b, or the column's default when b is empty.
func jsonBytes(b, empty []byte) []byte {
	if len(b) > 0 {
		return b
	}
	return empty
}

// pgBlobStatements splits blobs into unnest inserts of at most
// pgStatementRows rows and about pgBatchBytes bytes each.
func pgBlobStatements(blobs []Blob, now time.Time) []pgStatement {
	blobSize := func(b *Blob) int { return pgRowOverhead + len(b.Data) }
	return pgSplit(blobs, blobSize, func(chunk []Blob, size int) pgStatement {
		args := func() []any {
			n := len(chunk)
			sha, kind, enc, sizes, data := make([][]byte, n), make([]string, n), make([]string, n), make([]int64, n), make([][]byte, n)
			for i, b := range chunk {
				sha[i], kind[i], enc[i], sizes[i], data[i] = blobKey(b.SHA256), b.Kind, cmp.Or(b.Encoding, EncodingGzip), b.Size, b.Data
			}
			return []any{sha, kind, enc, sizes, data, now}
		}
		return pgStatement{what: evidenceWhat, table: pgBlobs, sql: pgInsertBlobs, upsert: pgUpsertBlobs,
			args: args, copy: pgBlobCopy(chunk, now), bytes: size}
	})
}

// pgPackStatements splits tasks (no (pack, label) twice) into unnest
// upserts of at most pgStatementRows rows.
func pgPackStatements(tasks []PackTask, tags []string, now time.Time) []pgStatement {
	var out []pgStatement
	for start := 0; start < len(tasks); start += pgStatementRows {
		chunk := tasks[start:min(start+pgStatementRows, len(tasks))]
		chunkTags := tags[start : start+len(chunk)]
		args := func() []any {
			n := len(chunk)
			pack, company, label, scorer, weight := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]float64, n)
			for i, t := range chunk {
				pack[i], company[i], label[i], scorer[i], weight[i] = t.PackSHA256, t.Company, t.Label, t.Scorer, t.Weight
			}
			return []any{pack, company, label, scorer, weight, chunkTags, now}
		}
		out = append(out, pgStatement{what: packTasksWhat, table: pgPacks, sql: pgInsertPackTasks, upsert: pgUpsertPackTasks,
			args: args, copy: pgPackCopy(chunk, chunkTags, now), bytes: len(chunk) * pgRowOverhead})
	}
	return out
}

// pgExec runs stmts as one transaction: as COPYs when no table of theirs
// has had a conflict (see pgInsertTurns), else each in its plain form
// unless its table has had one; a first attempt that hits a stored key
// makes pgExec run every statement again in its ON CONFLICT form.
func (s *Store) pgExec(ctx context.Context, stmts []pgStatement) error {
	if len(stmts) == 0 {
		return nil
	}
	conflicted := func(st pgStatement) bool { return s.pgConflicted[st.table].Load() }
	var err error
	switch {
	case !slices.ContainsFunc(stmts, conflicted) && !slices.ContainsFunc(stmts, func(st pgStatement) bool { return !st.copy.fits }):
		err = s.pgCopyRun(ctx, stmts)
	case slices.ContainsFunc(stmts, func(st pgStatement) bool { return !conflicted(st) }):
		err = s.pgRun(ctx, stmts, func(st pgStatement) string {
			if conflicted(st) {
				return st.upsert
			}
			return st.sql
		})
	default:
		return s.pgRun(ctx, stmts, func(st pgStatement) string { return st.upsert })
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != pgUniqueViolation || ctx.Err() != nil {
		return err
	}
	named := slices.ContainsFunc(stmts, func(st pgStatement) bool { return tableOf[st.table] == pgErr.TableName })
	for _, st := range stmts {
		if !named || tableOf[st.table] == pgErr.TableName {
			s.pgConflicted[st.table].Store(true)
		}
	}
	return s.pgRun(ctx, stmts, func(st pgStatement) string { return st.upsert })
}

// pgUniqueViolation is Postgres's unique_violation error code.
const pgUniqueViolation = "23505"

// tableOf is each pgTable's name, as a Postgres error names it.
var tableOf = [pgTables]string{pgTurns: "company_eval_turns", pgBlobs: "company_eval_blobs", pgPacks: "company_eval_packs"}

// pgRun runs stmts, each as the text sqlOf gives, as one transaction: one
// pipelined batch when they fit in pgBatchBytes, else batches of about that
// size inside an explicit transaction.
func (s *Store) pgRun(ctx context.Context, stmts []pgStatement, sqlOf func(pgStatement) string) error {
	total := 0
	for _, st := range stmts {
		total += st.bytes
	}
	return s.withPgx(ctx, func(c *pgx.Conn) error {
		if total <= pgBatchBytes {
			return sendBatch(ctx, c, stmts, sqlOf)
		}
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			for start := 0; start < len(stmts); {
				n, size := 0, 0
				for start+n < len(stmts) && (n == 0 || size+stmts[start+n].bytes <= pgBatchBytes) {
					size += stmts[start+n].bytes
					n++
				}
				if err := sendBatch(ctx, tx, stmts[start:start+n], sqlOf); err != nil {
					return err
				}
				start += n
			}
			return nil
		})
	})
}

type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// sendBatch sends stmts, each as the text sqlOf gives, in one round trip
// and reads every result; the first error is reported as its statement's.
func sendBatch(ctx context.Context, c batchSender, stmts []pgStatement, sqlOf func(pgStatement) string) error {
	var b pgx.Batch
	for _, st := range stmts {
		b.Queue(sqlOf(st), st.args()...)
	}
	res := c.SendBatch(ctx, &b)
	for _, st := range stmts {
		if _, err := res.Exec(); err != nil {
			res.Close()
			return fmt.Errorf("%s: %w", st.what, err)
		}
	}
	if err := res.Close(); err != nil {
		return fmt.Errorf("%s: %w", stmts[len(stmts)-1].what, err)
	}
	return nil
}

// withPgx runs f on a pgx connection of the store's pool.
func (s *Store) withPgx(ctx context.Context, f func(*pgx.Conn) error) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres connection is a %T, not pgx", dc)
		}
		return f(c.Conn())
	})
}
