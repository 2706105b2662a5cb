package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Run statuses.
const (
	RunRunning   = "running"
	RunCompleted = "completed"
	RunFailed    = "failed"
)

// RunKey identifies a run: one candidate scored against one pack by one
// scorer version. Runs with different scorer versions are different runs.
type RunKey struct {
	Candidate     string
	PackSHA256    string
	PackName      string // stored, not part of the key
	ScorerVersion string
	HostVersion   string // stored, not part of the key
	// Units are the run's drift units as JSON (docs/evidence.md); stored,
	// not part of the key.
	Units json.RawMessage
}

// Run is a run being written.
type Run struct {
	ID        int64
	Attempt   int
	Key       RunKey
	CreatedAt time.Time
}

// RunRow is a stored run with the summary of its latest attempt.
type RunRow struct {
	ID            int64
	Candidate     string
	PackSHA256    string
	PackName      string
	ScorerVersion string
	HostVersion   string
	Units         json.RawMessage // drift units; {} when recorded before they were kept
	Attempt       int
	Status        string
	Summary       json.RawMessage // nil until the attempt finished
	Verdict       json.RawMessage // nil unless one was stored
	Turns         int             // turns (labels) stored for the latest attempt, each counted once whatever its revisions
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// BeginRun starts or resumes the run for key. An existing run is resumed:
// same ID and attempt, status set back to running, so TurnsDone tells what
// is left. With fresh, the attempt number goes up by one and the previous
// summary is cleared; earlier attempts' turns stay stored. A new run starts
// at attempt 1. One statement, so concurrent callers agree on the run.
func (s *Store) BeginRun(ctx context.Context, key RunKey, fresh bool) (*Run, error) {
	if key.Candidate == "" || key.PackSHA256 == "" || key.ScorerVersion == "" {
		return nil, errors.New("begin run: candidate, pack sha256 and scorer version are required")
	}
	update := `status = 'running', updated_at = excluded.updated_at,
			pack_name = excluded.pack_name, host_version = excluded.host_version, units = excluded.units`
	if fresh {
		update += `, attempt = company_eval_runs.attempt + 1, summary = NULL, verdict = NULL`
	}
	now := s.now()
	r := &Run{Key: key}
	err := s.db.QueryRowContext(ctx, s.Rebind(`INSERT INTO company_eval_runs
		(candidate, pack_sha256, pack_name, scorer_version, host_version, units, attempt, status, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, 1, 'running', ?, ?)
		ON CONFLICT (candidate, pack_sha256, scorer_version) DO UPDATE SET `+update+`
		RETURNING id, attempt, created_at`),
		key.Candidate, key.PackSHA256, key.PackName, key.ScorerVersion, key.HostVersion, jsonText(key.Units, "{}"), now, now,
	).Scan(&r.ID, &r.Attempt, &r.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("begin run for candidate %q: %w", key.Candidate, err)
	}
	return r, nil
}

// FinishRun records how a run ended: status (completed or failed), its
// summary and, when not nil, its verdict (both JSON).
func (s *Store) FinishRun(ctx context.Context, runID int64, status string, summary, verdict []byte) error {
	switch status {
	case RunCompleted, RunFailed, RunRunning:
	default:
		return fmt.Errorf("finish run %d: status %q: want completed or failed", runID, status)
	}
	res, err := s.db.ExecContext(ctx, s.Rebind(`UPDATE company_eval_runs
		SET status = ?, summary = ?, verdict = ?, updated_at = ? WHERE id = ?`),
		status, nullJSON(summary), nullJSON(verdict), s.now(), runID)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", runID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("finish run %d: %w", runID, ErrNotFound)
	}
	return nil
}

// runBaseColumns are the company_eval_runs columns scanRun reads before
// the turn count.
const runBaseColumns = `r.id, r.candidate, r.pack_sha256, r.pack_name, r.scorer_version, r.host_version, r.units,
	r.attempt, r.status, r.summary, r.verdict, r.created_at, r.updated_at`

// runColumns count each run's turns (labels) of its latest attempt;
// lightRunColumns leave the count zero, cheap however many turns are stored.
const (
	runColumns = runBaseColumns + `,
	(SELECT count(DISTINCT t.label) FROM company_eval_turns t WHERE t.run_id = r.id AND t.attempt = r.attempt)`
	lightRunColumns = runBaseColumns + `, 0`
)

// Runs returns the stored runs of a pack (every run when packSHA256 is
// empty), each with its latest attempt's summary, ordered by candidate.
func (s *Store) Runs(ctx context.Context, packSHA256 string) ([]RunRow, error) {
	q := `SELECT ` + runColumns + ` FROM company_eval_runs r`
	var args []any
	if packSHA256 != "" {
		q += ` WHERE r.pack_sha256 = ?`
		args = append(args, packSHA256)
	}
	q += ` ORDER BY r.candidate, r.scorer_version, r.id`
	return s.queryRuns(ctx, q, args...)
}

// RunByID returns one stored run; an unknown id wraps ErrNotFound.
func (s *Store) RunByID(ctx context.Context, id int64) (RunRow, error) {
	return s.runByID(ctx, runColumns, id)
}

// runByID reads one run with the given run columns.
func (s *Store) runByID(ctx context.Context, cols string, id int64) (RunRow, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, s.Rebind(`SELECT `+cols+` FROM company_eval_runs r WHERE r.id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return RunRow{}, fmt.Errorf("read run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return RunRow{}, fmt.Errorf("read run %d: %w", id, err)
	}
	return r, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanRun(sc scanner) (RunRow, error) {
	var r RunRow
	var summary, verdict, units []byte
	err := sc.Scan(&r.ID, &r.Candidate, &r.PackSHA256, &r.PackName, &r.ScorerVersion, &r.HostVersion, &units,
		&r.Attempt, &r.Status, &summary, &verdict, &r.CreatedAt, &r.UpdatedAt, &r.Turns)
	r.Units = json.RawMessage(units)
	if summary != nil {
		r.Summary = json.RawMessage(summary)
	}
	if verdict != nil {
		r.Verdict = json.RawMessage(verdict)
	}
	return r, err
}

// nullJSON stores empty JSON as NULL, anything else as text.
func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
