package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/assay-eval/assay/host/verify"
)

// Kind is the River job kind of a batch of turns.
const Kind = "assay_score_batch"

// DefaultBatchSize is how many turns one job carries.
const DefaultBatchSize = 256

// ErrWrongScorers is a job refused because the worker's scorers are not
// the ones the run was recorded with.
var ErrWrongScorers = errors.New("this worker's scorers do not match the run's scorer version")

// BatchArgs is one job: turns of one run attempt to score.
type BatchArgs struct {
	RunID         int64            `json:"run_id"`
	Attempt       int              `json:"attempt"`
	PackSHA256    string           `json:"pack_sha256"`
	ScorerVersion string           `json:"scorer_version"`
	Turns         []verify.TurnRef `json:"turns"`
}

// Kind is the job's River kind.
func (BatchArgs) Kind() string { return Kind }

// Name is the River queue of a pack and scorer version: a worker takes jobs
// only from the queue of its own pack and plugins, so a job is never handed
// to a worker that would have to refuse it (docs/scale.md).
func Name(packSHA, scorerVersion string) string {
	return "assay_" + short(packSHA) + "_" + short(scorerVersion)
}

// Enqueue inserts q's turns as jobs of batchSize turns, in one bulk insert.
func Enqueue(ctx context.Context, pool *pgxpool.Pool, q *verify.Enqueued, packSHA, scorerVersion string, batchSize int) (int, error) {
	if batchSize <= 0 {
		batchSize = DefaultBatchSize
	}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		return 0, fmt.Errorf("enqueue: %w", err)
	}
	var params []river.InsertManyParams
	for s := 0; s < len(q.Refs); s += batchSize {
		params = append(params, river.InsertManyParams{Args: BatchArgs{RunID: q.Run.ID, Attempt: q.Run.Attempt,
			PackSHA256: packSHA, ScorerVersion: scorerVersion, Turns: q.Refs[s:min(s+batchSize, len(q.Refs))]},
			InsertOpts: &river.InsertOpts{Queue: Name(packSHA, scorerVersion)}})
	}
	if len(params) == 0 {
		return 0, nil
	}
	if _, err := client.InsertMany(ctx, params); err != nil {
		return 0, fmt.Errorf("enqueue run %d: %w", q.Run.ID, err)
	}
	return len(params), nil
}

// Counts are a queue's jobs by state.
type Counts struct {
	Available int `json:"available"`
	Running   int `json:"running"`
	Retryable int `json:"retryable"`
	Completed int `json:"completed"`
	Discarded int `json:"discarded"` // discarded or cancelled
	Other     int `json:"other"`     // scheduled, pending
}

// Pending is how many jobs are not finished.
func (c Counts) Pending() int { return c.Available + c.Running + c.Retryable + c.Other }

// RunCounts counts the jobs of run (every run when run is 0).
func RunCounts(ctx context.Context, pool *pgxpool.Pool, run int64) (Counts, error) {
	rows, err := pool.Query(ctx, `SELECT state::text, count(*) FROM river_job
		WHERE kind = $1 AND ($2 = 0 OR (args->>'run_id')::bigint = $2) GROUP BY state`, Kind, run)
	if err != nil {
		return Counts{}, fmt.Errorf("counting jobs: %w", err)
	}
	var c Counts
	defer rows.Close()
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return Counts{}, fmt.Errorf("counting jobs: %w", err)
		}
		switch state {
		case "available":
			c.Available = n
		case "running":
			c.Running = n
		case "retryable":
			c.Retryable = n
		case "completed":
			c.Completed = n
		case "discarded", "cancelled":
			c.Discarded += n
		default:
			c.Other += n
		}
	}
	return c, rows.Err()
}

// Wait polls run's jobs until none is pending, calling progress after each
// poll. A discarded job (it failed every attempt) is an error: its turns
// were never recorded.
func Wait(ctx context.Context, pool *pgxpool.Pool, run int64, every time.Duration, progress func(Counts)) error {
	for {
		c, err := RunCounts(ctx, pool, run)
		if err != nil {
			return err
		}
		if progress != nil {
			progress(c)
		}
		if c.Pending() == 0 {
			if c.Discarded > 0 {
				return fmt.Errorf("run %d: %d jobs were discarded after their attempts (assay doctor lists them)", run, c.Discarded)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
}
