package taskeval

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// RunStatus is the lifecycle state of an eval run.
type RunStatus string

// Run statuses. A run starts pending; completed, failed and cancelled are
// terminal.
const (
	RunPending   RunStatus = "pending"
	RunRunning   RunStatus = "running"
	RunCompleted RunStatus = "completed"
	RunFailed    RunStatus = "failed"
	RunCancelled RunStatus = "cancelled"
)

// Terminal reports whether no status change may leave s.
func (s RunStatus) Terminal() bool {
	return s == RunCompleted || s == RunFailed || s == RunCancelled
}

// CanTransition reports whether a run may move from one status to another:
// pending -> running, pending -> failed / cancelled (a run that never
// started), running -> completed / failed / cancelled. Nothing leaves a
// terminal state, and a run is completed only from running.
func CanTransition(from, to RunStatus) bool {
	switch from {
	case RunPending:
		return to == RunRunning || to == RunFailed || to == RunCancelled
	case RunRunning:
		return to == RunCompleted || to == RunFailed || to == RunCancelled
	}
	return false
}

// Store errors.
var (
	ErrRunNotFound    = errors.New("eval run not found")
	ErrResultNotFound = errors.New("eval task result not found")
	ErrTransition     = errors.New("invalid eval run status transition")
	ErrRunNotRunning  = errors.New("eval run is not running")
)

// TransitionError is a refused status change.
type TransitionError struct {
	RunID    string
	From, To RunStatus
}

func (e *TransitionError) Error() string {
	if e.From.Terminal() {
		return fmt.Sprintf("eval run %s: %s is terminal, cannot move to %s", e.RunID, e.From, e.To)
	}
	return fmt.Sprintf("eval run %s: cannot move from %s to %s", e.RunID, e.From, e.To)
}

func (e *TransitionError) Unwrap() error { return ErrTransition }

// Run is one evaluation run.
type Run struct {
	ID        string    `json:"id"`
	TaskID    string    `json:"taskId,omitempty"`
	Status    RunStatus `json:"status"`
	Error     string    `json:"error,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Event is one entry of a run's event trail; Seq counts 1, 2, ... per run.
type Event struct {
	RunID     string          `json:"runId"`
	Seq       int             `json:"seq"`
	Kind      string          `json:"kind"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"createdAt"`
}

// Event kinds the store writes itself.
const (
	EventCreated = "created"
	EventStatus  = "status"
	EventResult  = "result"
)

// Store keeps eval runs, task results and run events in assay's database
// (the tables of host/store/migrations/*/002_taskeval.sql).
type Store struct {
	db     *sql.DB
	rebind func(string) string
	now    func() time.Time
}

// NewStore uses db, whose schema is already migrated. Queries are written
// with ? placeholders and passed through rebind (the database store's
// Rebind, which makes $1, $2, ... for Postgres); nil leaves them as is.
func NewStore(db *sql.DB, rebind func(string) string) *Store {
	if rebind == nil {
		rebind = func(q string) string { return q }
	}
	return &Store{db: db, rebind: rebind, now: func() time.Time { return time.Now().UTC() }}
}

func newRunID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new run id: %w", err)
	}
	return "er-" + hex.EncodeToString(b[:]), nil
}

// CreateRun creates a pending run for taskID ("" for a run over many
// tasks) and records a "created" event.
func (s *Store) CreateRun(ctx context.Context, taskID string) (*Run, error) {
	id, err := newRunID()
	if err != nil {
		return nil, err
	}
	now := s.now()
	run := &Run{ID: id, TaskID: taskID, Status: RunPending, CreatedAt: now, UpdatedAt: now}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO eval_runs (id, task_id, status, error, event_seq, created_at, updated_at)
			VALUES (?, ?, ?, '', 0, ?, ?)`), id, taskID, string(RunPending), now, now); err != nil {
			return err
		}
		_, err := s.appendEvent(ctx, tx, id, EventCreated, map[string]string{"taskId": taskID, "status": string(RunPending)})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create eval run: %w", err)
	}
	return run, nil
}

// Run reads one run.
func (s *Store) Run(ctx context.Context, id string) (*Run, error) {
	run, err := s.readRun(ctx, s.db, id)
	if err != nil {
		return nil, fmt.Errorf("read eval run %s: %w", id, err)
	}
	return run, nil
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) readRun(ctx context.Context, q queryRower, id string) (*Run, error) {
	var r Run
	var status string
	err := q.QueryRowContext(ctx, s.rebind(`SELECT id, task_id, status, error, created_at, updated_at FROM eval_runs WHERE id = ?`), id).
		Scan(&r.ID, &r.TaskID, &status, &r.Error, &r.CreatedAt, &r.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrRunNotFound
	}
	if err != nil {
		return nil, err
	}
	r.Status = RunStatus(status)
	return &r, nil
}

// SetStatus moves run id to status to, recording errMsg (for failed runs)
// and a "status" event. A move CanTransition refuses is a *TransitionError.
func (s *Store) SetStatus(ctx context.Context, id string, to RunStatus, errMsg string) (*Run, error) {
	var run *Run
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := s.readRun(ctx, tx, id)
		if err != nil {
			return err
		}
		if !CanTransition(cur.Status, to) {
			return &TransitionError{RunID: id, From: cur.Status, To: to}
		}
		now := s.now()
		res, err := tx.ExecContext(ctx, s.rebind(`UPDATE eval_runs SET status = ?, error = ?, updated_at = ? WHERE id = ? AND status = ?`),
			string(to), errMsg, now, id, string(cur.Status))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return fmt.Errorf("status changed concurrently from %s", cur.Status)
		}
		payload := map[string]string{"from": string(cur.Status), "to": string(to)}
		if errMsg != "" {
			payload["error"] = errMsg
		}
		if _, err := s.appendEvent(ctx, tx, id, EventStatus, payload); err != nil {
			return err
		}
		cur.Status, cur.Error, cur.UpdatedAt = to, errMsg, now
		run = cur
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("set eval run %s status to %s: %w", id, to, err)
	}
	return run, nil
}

// SaveResult stores the result of one task in a running run, replacing an
// earlier result for the same run and task, and records a "result" event.
// The result must be authoritative (Result.Verify) and its bundle valid
// (ValidateBundle): an over-cap group or wrong order is rejected, not cut.
func (s *Store) SaveResult(ctx context.Context, runID string, r *Result) error {
	if err := r.Verify(); err != nil {
		return fmt.Errorf("save eval result: %w", err)
	}
	if err := ValidateBundle(r.EvidenceBundle); err != nil {
		return fmt.Errorf("save eval result %s: %w", r.TaskID, err)
	}
	scores, err := json.Marshal(r.CategoryScores)
	if err != nil {
		return fmt.Errorf("save eval result %s: %w", r.TaskID, err)
	}
	bundle, err := json.Marshal(r.EvidenceBundle)
	if err != nil {
		return fmt.Errorf("save eval result %s: %w", r.TaskID, err)
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := s.readRun(ctx, tx, runID)
		if err != nil {
			return err
		}
		if cur.Status != RunRunning {
			return fmt.Errorf("%w: run %s is %s", ErrRunNotRunning, runID, cur.Status)
		}
		now := s.now()
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO eval_task_results
			(run_id, task_id, category_scores, overall_score, band, evidence_bundle, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (run_id, task_id) DO UPDATE SET
				category_scores = excluded.category_scores,
				overall_score = excluded.overall_score,
				band = excluded.band,
				evidence_bundle = excluded.evidence_bundle,
				updated_at = excluded.updated_at`),
			runID, r.TaskID, string(scores), r.OverallScore, string(r.Band), string(bundle), now, now); err != nil {
			return err
		}
		_, err = s.appendEvent(ctx, tx, runID, EventResult, map[string]any{
			"taskId": r.TaskID, "overallScore": r.OverallScore, "band": r.Band})
		return err
	})
	if err != nil {
		return fmt.Errorf("save eval result %s in run %s: %w", r.TaskID, runID, err)
	}
	return nil
}

// Result reads the stored result of taskID in run runID.
func (s *Store) Result(ctx context.Context, runID, taskID string) (*Result, error) {
	var scores, bundle, band string
	r := &Result{TaskID: taskID}
	err := s.db.QueryRowContext(ctx, s.rebind(`SELECT category_scores, overall_score, band, evidence_bundle
		FROM eval_task_results WHERE run_id = ? AND task_id = ?`), runID, taskID).
		Scan(&scores, &r.OverallScore, &band, &bundle)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrResultNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read eval result %s in run %s: %w", taskID, runID, err)
	}
	r.Band = Band(band)
	if err := json.Unmarshal([]byte(scores), &r.CategoryScores); err != nil {
		return nil, fmt.Errorf("read eval result %s in run %s: category_scores: %w", taskID, runID, err)
	}
	r.EvidenceBundle = &Bundle{}
	if err := json.Unmarshal([]byte(bundle), r.EvidenceBundle); err != nil {
		return nil, fmt.Errorf("read eval result %s in run %s: evidence_bundle: %w", taskID, runID, err)
	}
	return r, nil
}

// AppendEvent adds an event to run runID's trail with the next sequence
// number; payload is stored as JSON.
func (s *Store) AppendEvent(ctx context.Context, runID, kind string, payload any) (Event, error) {
	var ev Event
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		ev, err = s.appendEvent(ctx, tx, runID, kind, payload)
		return err
	})
	if err != nil {
		return Event{}, fmt.Errorf("append eval run event to %s: %w", runID, err)
	}
	return ev, nil
}

// appendEvent takes the next number from eval_runs.event_seq; the UPDATE
// locks the run row, so concurrent writers get 1, 2, 3, ... without gaps.
func (s *Store) appendEvent(ctx context.Context, tx *sql.Tx, runID, kind string, payload any) (Event, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return Event{}, fmt.Errorf("event payload: %w", err)
	}
	if payload == nil {
		body = []byte("{}")
	}
	ev := Event{RunID: runID, Kind: kind, Payload: body, CreatedAt: s.now()}
	err = tx.QueryRowContext(ctx, s.rebind(`UPDATE eval_runs SET event_seq = event_seq + 1 WHERE id = ? RETURNING event_seq`), runID).Scan(&ev.Seq)
	if errors.Is(err, sql.ErrNoRows) {
		return Event{}, ErrRunNotFound
	}
	if err != nil {
		return Event{}, err
	}
	if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO eval_run_events (run_id, seq, kind, payload, created_at) VALUES (?, ?, ?, ?, ?)`),
		runID, ev.Seq, kind, string(body), ev.CreatedAt); err != nil {
		return Event{}, err
	}
	return ev, nil
}

// Events returns run runID's events in sequence order.
func (s *Store) Events(ctx context.Context, runID string) ([]Event, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT seq, kind, payload, created_at FROM eval_run_events WHERE run_id = ? ORDER BY seq`), runID)
	if err != nil {
		return nil, fmt.Errorf("read eval run events of %s: %w", runID, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		ev := Event{RunID: runID}
		var payload string
		if err := rows.Scan(&ev.Seq, &ev.Kind, &payload, &ev.CreatedAt); err != nil {
			return nil, fmt.Errorf("read eval run events of %s: %w", runID, err)
		}
		ev.Payload = json.RawMessage(payload)
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read eval run events of %s: %w", runID, err)
	}
	return out, nil
}

func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
