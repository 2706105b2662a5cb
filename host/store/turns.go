package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// Turn statuses.
const (
	TurnScored   = "scored"
	TurnUnscored = "unscored" // the scorer could not score it (scorer_error)
	TurnMissing  = "missing"  // the pack task had no turn in the run
)

// TurnRow is one stored turn result. A turn of a run attempt may be stored
// more than once: each time its inputs change and it is scored again, as the
// next revision (docs/verify-engine.md); the latest revision is the turn's
// result and the earlier ones stay as its history.
type TurnRow struct {
	ID                int64 // set when read back
	RunID             int64
	Label             string
	Epoch             int      // which repetition of the task, from 1; 0 is stored as 1
	Attempt           int      // the run's attempt (a fresh re-run is the next attempt)
	Revision          int      // the turn's revision within the attempt, from 1; 0 is stored as 1
	InputKey          string   // sha256 of the turn's inputs; empty when unknown (matches nothing)
	Status            string   // scored, unscored or missing
	ProcessScore      *float64 // nil when missing
	KPIScore          *float64 // nil when unscored or missing
	TurnScore         *float64 // nil when unscored or missing
	Checks            json.RawMessage
	FailureTags       json.RawMessage
	ScorerID          string
	ScorerSHA256      string
	StateBeforeSHA256 string          // a company_eval_snapshots key, or empty
	StateAfterSHA256  string          // a company_eval_snapshots key, or empty
	Result            json.RawMessage // the turn's whole results.json object
	TraceSHA256       string          // a company_eval_blobs key, or empty (recorded before evidence was kept)
	MetricsSHA256     string          // the sha256 of the turn's metrics row, or empty
	// Metrics is the metrics row itself, kept in the turn (docs/evidence.md);
	// nil for a turn whose row is in company_eval_blobs instead (recorded
	// before migration 012, or none).
	Metrics []byte
	// Trace is the trace's bytes when the turn keeps them itself (a trace
	// of at most 512 bytes, since migration 013: docs/evidence.md); nil for
	// a turn whose trace is in company_eval_blobs, or none. It is written,
	// never read back with the row: TraceKept says the turn has it, and
	// OpenTrace reads it.
	Trace     []byte
	TraceKept bool      // set when read back
	CreatedAt time.Time // set when read back
}

// TraceKeptBy is what OpenTrace takes of a turn read back: its id when it
// keeps its trace itself, 0 when the trace is a blob.
func (t *TurnRow) TraceKeptBy() int64 {
	if t.TraceKept {
		return t.ID
	}
	return 0
}

const turnColumns = turnPageColumns + `, metrics, trace`

// turnPageColumns are turnColumns but metrics and trace, which no page of
// turns shows: TurnPage reads NULL in the metrics row's place, and no read
// of rows reads a trace, only whether the turn keeps one (TraceKeptColumn;
// OpenTrace reads it).
const turnPageColumns = `run_id, label, attempt, status, process_score, kpi_score, turn_score, checks, failure_tags,
	scorer_id, scorer_sha256, state_before_sha256, state_after_sha256, result, created_at, revision, input_key, epoch, trace_sha256, metrics_sha256`

const turnColumnCount = 22

// TraceKeptColumn is what a read of turn rows selects last: whether the
// turn keeps its trace itself (TurnRow.TraceKept), without reading it;
// alias is the turns table's alias in the query ("t."), or "".
func TraceKeptColumn(alias string) string { return `length(` + alias + `trace) > 0` }

// TurnKey is one turn of a run attempt: an epoch of a task
// (docs/verify-engine.md).
type TurnKey struct {
	Label string
	Epoch int
}

// turnsPerStatement bounds a multi-row INSERT well under both databases'
// parameter limits.
const turnsPerStatement = 200

// check refuses a turn the schema would, before anything is written.
func (t *TurnRow) check() error {
	switch t.Status {
	case TurnScored, TurnUnscored, TurnMissing:
	default:
		return fmt.Errorf("turn %q: status %q: want scored, unscored or missing", t.Label, t.Status)
	}
	if t.RunID == 0 || t.Label == "" || t.Attempt < 1 || t.Revision < 0 || t.Epoch < 0 {
		return fmt.Errorf("turn %q: run id, label, attempt >= 1, revision >= 0 and epoch >= 0 are required", t.Label)
	}
	return nil
}

func (t *TurnRow) args(now time.Time) ([]any, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	return t.appendArgs(make([]any, 0, turnColumnCount), now, new(rowBoxes)), nil
}

// appendArgs appends the values of turnColumns of a checked turn, a value
// equal to the one bound before it in its column (by the rows of bx) as
// the same interface value.
func (t *TurnRow) appendArgs(args []any, now any, bx *rowBoxes) []any {
	return append(args, bx.int64(0, t.RunID), t.Label, bx.int(1, t.Attempt), bx.str(2, t.Status),
		bx.float(3, t.ProcessScore), bx.float(4, t.KPIScore), bx.float(5, t.TurnScore),
		bx.text(6, t.Checks, "[]"), bx.text(7, t.FailureTags, "[]"), bx.str(8, t.ScorerID), bx.str(9, t.ScorerSHA256),
		bx.str(10, t.StateBeforeSHA256), bx.str(11, t.StateAfterSHA256), jsonText(t.Result, "{}"), now,
		bx.int(12, max(t.Revision, 1)), t.InputKey, bx.int(13, max(t.Epoch, 1)),
		t.TraceSHA256, t.MetricsSHA256, jsonBytes(t.Metrics, emptyBytes), jsonBytes(t.Trace, emptyBytes))
}

// rowBoxes are the values the rows of one write bound last in the columns
// whose values rows share (a chunk's run, status, scorer, scores, checks
// and failure tags), each kept with its interface value: a value equal to
// the last is bound as that interface value, not boxed (allocated) again.
// An equal value binds the same, so what is stored does not change.
type rowBoxes struct {
	strs [14]string
	nums [14]uint64
	vals [14]any
}

func (b *rowBoxes) str(col int, s string) any {
	if b.vals[col] == nil || b.strs[col] != s {
		b.strs[col], b.vals[col] = s, s
	}
	return b.vals[col]
}

// text is jsonText(raw, empty) boxed: a copy of raw only when it is not
// the text bound last.
func (b *rowBoxes) text(col int, raw []byte, empty string) any {
	if len(raw) == 0 {
		return b.str(col, empty)
	}
	if b.vals[col] == nil || b.strs[col] != string(raw) {
		s := string(raw)
		b.strs[col], b.vals[col] = s, s
	}
	return b.vals[col]
}

func (b *rowBoxes) int(col, v int) any {
	if _, ok := b.vals[col].(int); !ok || b.nums[col] != uint64(v) {
		b.nums[col], b.vals[col] = uint64(v), v
	}
	return b.vals[col]
}

func (b *rowBoxes) int64(col int, v int64) any {
	if _, ok := b.vals[col].(int64); !ok || b.nums[col] != uint64(v) {
		b.nums[col], b.vals[col] = uint64(v), v
	}
	return b.vals[col]
}

// float is *f, or nil for a nil f; a value compared bit for bit (-0 is not 0).
func (b *rowBoxes) float(col int, f *float64) any {
	if f == nil {
		return nil
	}
	if _, ok := b.vals[col].(float64); !ok || b.nums[col] != math.Float64bits(*f) {
		b.nums[col], b.vals[col] = math.Float64bits(*f), *f
	}
	return b.vals[col]
}

func floatPtr(f sql.NullFloat64) *float64 {
	if !f.Valid {
		return nil
	}
	v := f.Float64
	return &v
}

func jsonText(b json.RawMessage, empty string) string {
	if len(b) == 0 {
		return empty
	}
	return string(b)
}

// InsertTurn stores one turn; a turn already stored under (run, label,
// epoch, attempt, revision) is left as it is, so a resumed run never duplicates.
func (s *Store) InsertTurn(ctx context.Context, t TurnRow) error {
	_, err := s.InsertTurnOnce(ctx, t)
	return err
}

// InsertTurnOnce is InsertTurn that also reports whether the row was new.
func (s *Store) InsertTurnOnce(ctx context.Context, t TurnRow) (bool, error) {
	args, err := t.args(s.now())
	if err != nil {
		return false, fmt.Errorf("store turn: %w", err)
	}
	res, err := s.db.ExecContext(ctx, s.insertTurnsSQL(1), args...)
	if err != nil {
		return false, fmt.Errorf("store turn %q: %w", t.Label, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store turn %q: %w", t.Label, err)
	}
	return n == 1, nil
}

// InsertTurns stores turns in one transaction, many rows per statement;
// turns already stored are skipped.
func (s *Store) InsertTurns(ctx context.Context, turns []TurnRow) error {
	return s.RecordTurns(ctx, nil, turns)
}

func (s *Store) insertTurnsSQL(rows int) string {
	return s.Rebind(turnsInsert.sql(rows))
}

// TurnsDone returns the latest revision of each turn stored for one attempt
// of a run, by label and epoch: what a resumed run may reuse. The turns
// come without their metrics rows (Metrics is nil; metrics_sha256 names
// the row): a resumed pass never reads them, and TurnMetrics reads those
// of the turns that need them.
func (s *Store) TurnsDone(ctx context.Context, runID int64, attempt int) (map[TurnKey]TurnRow, error) {
	all, err := s.readTurns(ctx, runID, attempt, "", false)
	if err != nil {
		return nil, err
	}
	out := make(map[TurnKey]TurnRow, len(all))
	for _, t := range all { // in revision order: the latest wins
		out[TurnKey{Label: t.Label, Epoch: t.Epoch}] = t
	}
	return out, nil
}

// TurnRevisions returns every revision stored for one task of a run
// attempt, by epoch, oldest first.
func (s *Store) TurnRevisions(ctx context.Context, runID int64, attempt int, label string) ([]TurnRow, error) {
	return s.turns(ctx, runID, attempt, label)
}

// turns reads the turns of a run attempt (only label's, unless it is
// empty), ordered by label, epoch and revision.
func (s *Store) turns(ctx context.Context, runID int64, attempt int, label string) ([]TurnRow, error) {
	return s.readTurns(ctx, runID, attempt, label, true)
}

// readTurns is turns, with each turn's metrics row only when metrics is
// set (NULL is read in its place otherwise).
func (s *Store) readTurns(ctx context.Context, runID int64, attempt int, label string, metrics bool) ([]TurnRow, error) {
	m := `metrics`
	if !metrics {
		m = `NULL`
	}
	cols := turnPageColumns + `, ` + m + `, ` + TraceKeptColumn("")
	q := `SELECT id, ` + cols + ` FROM company_eval_turns WHERE run_id = ? AND attempt = ?`
	args := []any{runID, attempt}
	if label != "" {
		q += ` AND label = ?`
		args = append(args, label)
	}
	rows, err := s.db.QueryContext(ctx, s.Rebind(q+` ORDER BY label, epoch, revision`), args...)
	if err != nil {
		return nil, fmt.Errorf("read turns of run %d: %w", runID, err)
	}
	return scanTurns(rows, runID)
}

// scanTurns reads and closes rows of id and turnColumns.
func scanTurns(rows *sql.Rows, runID int64) ([]TurnRow, error) {
	defer rows.Close()
	var out []TurnRow
	for rows.Next() {
		var t TurnRow
		var process, kpi, turn sql.NullFloat64
		var checks, tags, result []byte
		if err := rows.Scan(&t.ID, &t.RunID, &t.Label, &t.Attempt, &t.Status, &process, &kpi,
			&turn, &checks, &tags, &t.ScorerID, &t.ScorerSHA256, &t.StateBeforeSHA256,
			&t.StateAfterSHA256, &result, &t.CreatedAt, &t.Revision, &t.InputKey, &t.Epoch, &t.TraceSHA256, &t.MetricsSHA256, &t.Metrics, &t.TraceKept); err != nil {
			return nil, fmt.Errorf("read turns of run %d: %w", runID, err)
		}
		t.ProcessScore, t.KPIScore, t.TurnScore = floatPtr(process), floatPtr(kpi), floatPtr(turn)
		t.Checks, t.FailureTags, t.Result = checks, tags, result
		if len(t.Metrics) == 0 {
			t.Metrics = nil
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read turns of run %d: %w", runID, err)
	}
	return out, nil
}

// PutSnapshot stores a state snapshot under its sha256 (computed by the
// caller over exactly these bytes) in company_eval_snapshots, as assay did
// before evidence was kept (verify now stores snapshots with PutBlobs).
// Storing the same key again is a no-op.
func (s *Store) PutSnapshot(ctx context.Context, sha256 string, json []byte) error {
	if sha256 == "" {
		return errors.New("store snapshot: empty sha256")
	}
	_, err := s.db.ExecContext(ctx, s.Rebind(`INSERT INTO company_eval_snapshots (sha256, json, created_at)
		VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING`), sha256, string(json), s.now())
	if err != nil {
		return fmt.Errorf("store snapshot %s: %w", shortSHA(sha256), err)
	}
	return nil
}

// Snapshot returns the stored snapshot with key sha256, kept as evidence
// (company_eval_blobs) or stored before evidence was kept; an unknown key
// wraps ErrNotFound.
func (s *Store) Snapshot(ctx context.Context, sha256 string) ([]byte, error) {
	return s.ReadBlob(ctx, sha256)
}
