package store

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// COPY in the binary format (docs/storage.md, "Recording"): a header, then
// each row as its number of fields and each field as its length (-1 for
// NULL) and its bytes in the column type's binary form, then a trailer.
// The rows are encoded from the Go values as the driver reads them, so a
// chunk is never held encoded whole.

// The COPY commands of the three tables, of the columns pgInsertTurns,
// pgInsertBlobs and pgInsertPackTasks fill.
const (
	pgCopyTurns     = `COPY company_eval_turns (` + turnColumns + `) FROM STDIN (FORMAT binary)`
	pgCopyBlobs     = `COPY company_eval_blobs (` + pgBlobColumns + `) FROM STDIN (FORMAT binary)`
	pgCopyPackTasks = `COPY company_eval_packs (` + pgPackColumns + `) FROM STDIN (FORMAT binary)`
)

// pgCopy is one statement's rows as a COPY: sql is the command, row
// appends row i of n. fits is false when a value is out of its column's
// range (an integer column takes 4 bytes in the binary format), so the
// statement goes as an INSERT and the server reports it as before.
type pgCopy struct {
	sql  string
	n    int
	row  func(b []byte, i int) []byte
	fits bool
}

// pgCopyRun runs stmts as COPYs in one simple query of one COPY a table
// ("COPY … FROM STDIN (FORMAT binary); COPY …"), consecutive statements of
// one table being one COPY. Postgres runs the statements of a simple query
// as one transaction, so a chunk is one round trip and a failure anywhere
// keeps nothing of it. The data of every COPY is sent after the query
// without waiting for the server (copyIn); the error names the statement
// whose COPY failed.
func (s *Store) pgCopyRun(ctx context.Context, stmts []pgStatement) error {
	var groups [][]pgStatement
	var q strings.Builder
	for start := 0; start < len(stmts); {
		end := start + 1
		for end < len(stmts) && stmts[end].copy.sql == stmts[start].copy.sql {
			end++
		}
		if len(groups) > 0 {
			q.WriteString("; ")
		}
		q.WriteString(stmts[start].copy.sql)
		groups = append(groups, stmts[start:end])
		start = end
	}
	return s.withPgx(ctx, func(c *pgx.Conn) error {
		done, err := copyIn(ctx, c.PgConn(), q.String(), groups)
		if err != nil {
			return fmt.Errorf("%s: %w", groups[min(done, len(groups)-1)][0].what, err)
		}
		return nil
	})
}

// copyIn sends the simple query q, whose statements are one COPY FROM
// STDIN for each of groups, and then each group's rows followed by
// CopyDone, from a goroutine, while it reads the server's replies; it
// returns how many COPYs completed and the first error. The protocol has
// the server drop the data of COPYs it no longer runs after an error, and
// report ReadyForQuery with the query's transaction rolled back. A
// connection that fails mid-way is closed, so the pool does not reuse it.
func copyIn(ctx context.Context, pc *pgconn.PgConn, q string, groups [][]pgStatement) (int, error) {
	fe := pc.Frontend()
	fe.SendQuery(&pgproto3.Query{String: q})
	if err := fe.Flush(); err != nil {
		pgClose(pc, nil)
		return 0, err
	}
	written := make(chan error, 1)
	go func() { written <- sendCopyData(fe, groups) }()
	done := 0
	var pgErr error
	for {
		msg, err := pc.ReceiveMessage(ctx)
		if err != nil {
			pgClose(pc, written)
			return done, err
		}
		switch msg := msg.(type) {
		case *pgproto3.CommandComplete:
			done++
		case *pgproto3.ErrorResponse:
			if pgErr == nil {
				pgErr = pgconn.ErrorResponseToPgError(msg)
			}
		case *pgproto3.ReadyForQuery:
			if err := <-written; err != nil {
				pgClose(pc, nil)
				return done, cmp.Or(pgErr, err)
			}
			return done, pgErr
		}
	}
}

// sendCopyData sends each group's rows as CopyData messages of up to 64
// KiB, each group's followed by CopyDone.
func sendCopyData(fe *pgproto3.Frontend, groups [][]pgStatement) error {
	buf := make([]byte, 5, 64<<10)
	for _, g := range groups {
		r := &copyReader{stmts: g}
		for {
			n, err := r.Read(buf[5:cap(buf)])
			if n > 0 {
				buf = buf[:5+n]
				buf[0] = 'd'
				binary.BigEndian.PutUint32(buf[1:], uint32(4+n))
				if err := fe.SendUnbufferedEncodedCopyData(buf); err != nil {
					return err
				}
			}
			if err == io.EOF {
				break
			}
		}
		fe.Send(&pgproto3.CopyDone{})
		if err := fe.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// pgClose closes a connection a COPY left in an unknown state: its socket
// first, which ends the sending goroutine's writes (waited for on written
// when not nil), then the connection, so the pool discards it.
func pgClose(pc *pgconn.PgConn, written <-chan error) {
	pc.Conn().Close()
	if written != nil {
		<-written
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	pc.Close(ctx)
}

// copyReader is the COPY data of stmts' rows, encoded as it is read.
type copyReader struct {
	stmts    []pgStatement
	st, row  int // the next row to encode
	started  bool
	finished bool
	buf      []byte
	off      int
}

// pgCopyHeader is the binary format's signature, flags and header
// extension length.
var pgCopyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

func (r *copyReader) Read(p []byte) (int, error) {
	if r.off > 0 { // keep what the last read left, at the front
		r.buf, r.off = append(r.buf[:0], r.buf[r.off:]...), 0
	}
	for len(r.buf) < len(p) && !r.finished {
		switch {
		case !r.started:
			r.buf, r.started = append(r.buf, pgCopyHeader...), true
		case r.st == len(r.stmts):
			r.buf, r.finished = binary.BigEndian.AppendUint16(r.buf, 0xffff), true // trailer: -1 fields
		case r.row == r.stmts[r.st].copy.n:
			r.st, r.row = r.st+1, 0
		default:
			r.buf = r.stmts[r.st].copy.row(r.buf, r.row)
			r.row++
		}
	}
	n := copy(p, r.buf)
	r.off = n
	if n == 0 && r.finished {
		return 0, io.EOF
	}
	return n, nil
}

// The binary forms of the column types assay writes.

func copyFields(b []byte, n int) []byte { return binary.BigEndian.AppendUint16(b, uint16(n)) }

func copyText(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// copyBytes is a text or bytea value; nil is NULL, as the driver sends it.
func copyBytes(b, v []byte) []byte {
	if v == nil {
		return binary.BigEndian.AppendUint32(b, math.MaxUint32) // -1: NULL
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

func copyInt8(b []byte, v int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

func copyInt4(b []byte, v int) []byte {
	b = binary.BigEndian.AppendUint32(b, 4)
	return binary.BigEndian.AppendUint32(b, uint32(int32(v)))
}

func copyFloat8(b []byte, v float64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, math.Float64bits(v))
}

func copyNullFloat8(b []byte, v *float64) []byte {
	if v == nil {
		return binary.BigEndian.AppendUint32(b, math.MaxUint32)
	}
	return copyFloat8(b, *v)
}

// pgEpoch is where a timestamptz's binary form counts microseconds from.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func copyTimestamptz(b []byte, t time.Time) []byte {
	return copyInt8(b, t.Sub(pgEpoch).Microseconds())
}

func fitsInt4(v int64) bool { return v >= math.MinInt32 && v <= math.MaxInt32 }

// pgTurnCopy is turns as the COPY of pgCopyTurns, the values pgTurnArgs
// sends.
func pgTurnCopy(turns []TurnRow, now time.Time) pgCopy {
	fits := !slices.ContainsFunc(turns, func(t TurnRow) bool {
		return !fitsInt4(int64(t.Attempt)) || !fitsInt4(int64(t.Revision)) || !fitsInt4(int64(t.Epoch))
	})
	return pgCopy{sql: pgCopyTurns, n: len(turns), fits: fits, row: func(b []byte, i int) []byte {
		t := &turns[i]
		b = copyFields(b, turnColumnCount)
		b = copyInt8(b, t.RunID)
		b = copyText(b, t.Label)
		b = copyInt4(b, t.Attempt)
		b = copyText(b, t.Status)
		b = copyNullFloat8(b, t.ProcessScore)
		b = copyNullFloat8(b, t.KPIScore)
		b = copyNullFloat8(b, t.TurnScore)
		b = copyBytes(b, jsonBytes(t.Checks, emptyArrayBytes))
		b = copyBytes(b, jsonBytes(t.FailureTags, emptyArrayBytes))
		b = copyText(b, t.ScorerID)
		b = copyText(b, t.ScorerSHA256)
		b = copyText(b, t.StateBeforeSHA256)
		b = copyText(b, t.StateAfterSHA256)
		b = copyBytes(b, jsonBytes(t.Result, emptyObjectBytes))
		b = copyTimestamptz(b, now)
		b = copyInt4(b, max(t.Revision, 1))
		b = copyText(b, t.InputKey)
		b = copyInt4(b, max(t.Epoch, 1))
		b = copyText(b, t.TraceSHA256)
		b = copyText(b, t.MetricsSHA256)
		b = copyBytes(b, jsonBytes(t.Metrics, emptyBytes))
		return copyBytes(b, jsonBytes(t.Trace, emptyBytes))
	}}
}

// pgBlobCopy is blobs as the COPY of pgCopyBlobs.
func pgBlobCopy(blobs []Blob, now time.Time) pgCopy {
	fits := !slices.ContainsFunc(blobs, func(b Blob) bool { return !fitsInt4(b.Size) })
	return pgCopy{sql: pgCopyBlobs, n: len(blobs), fits: fits, row: func(b []byte, i int) []byte {
		x := &blobs[i]
		b = copyFields(b, 6)
		b = copyBytes(b, blobKey(x.SHA256))
		b = copyText(b, x.Kind)
		b = copyText(b, cmp.Or(x.Encoding, EncodingGzip))
		b = copyInt4(b, int(x.Size))
		b = copyBytes(b, x.Data)
		return copyTimestamptz(b, now)
	}}
}

// pgPackCopy is tasks, with their slice tags as JSON, as the COPY of
// pgCopyPackTasks.
func pgPackCopy(tasks []PackTask, tags []string, now time.Time) pgCopy {
	return pgCopy{sql: pgCopyPackTasks, n: len(tasks), fits: true, row: func(b []byte, i int) []byte {
		t := &tasks[i]
		b = copyFields(b, 7)
		b = copyText(b, t.PackSHA256)
		b = copyText(b, t.Company)
		b = copyText(b, t.Label)
		b = copyText(b, t.Scorer)
		b = copyFloat8(b, t.Weight)
		b = copyText(b, tags[i])
		return copyTimestamptz(b, now)
	}}
}
