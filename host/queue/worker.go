package queue

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
)

// WorkerConfig is what a worker scores with.
type WorkerConfig struct {
	Engine      *verify.Engine // the pack and scorers of this worker
	Store       *store.Store
	Pool        *pgxpool.Pool
	PackSHA256  string
	ScorerVer   string // this worker's scorer version (its plugins' digests)
	Concurrency int
	// JobTimeout bounds one job; a job running longer (its worker was
	// killed) is rescued and retried after RescueAfter.
	JobTimeout  time.Duration
	RescueAfter time.Duration
	Logger      hclog.Logger
}

// batchWorker scores batch jobs.
type batchWorker struct {
	river.WorkerDefaults[BatchArgs]
	cfg WorkerConfig
}

// Work scores a job's turns and records them in the transaction that
// completes the job, so a turn is recorded exactly once. A job of another
// pack or scorer version (it cannot reach this worker's queue unless it was
// moved there) is refused with a logged reason and retried soon.
func (w *batchWorker) Work(ctx context.Context, job *river.Job[BatchArgs]) error {
	a := job.Args
	if a.ScorerVersion != w.cfg.ScorerVer || a.PackSHA256 != w.cfg.PackSHA256 {
		err := fmt.Errorf("refusing job %d of run %d: %w (run %s, pack %s; worker %s, pack %s)", job.ID, a.RunID,
			ErrWrongScorers, short(a.ScorerVersion), short(a.PackSHA256), short(w.cfg.ScorerVer), short(w.cfg.PackSHA256))
		w.cfg.Logger.Warn("job refused", "job", job.ID, "run", a.RunID, "reason", err.Error())
		return err
	}
	run, err := w.cfg.Store.RunSummary(ctx, a.RunID) // the turn count is not needed: skip counting the run's turns per job
	if err != nil {
		return fmt.Errorf("job %d: %w", job.ID, err)
	}
	if run.Attempt != a.Attempt {
		w.cfg.Logger.Warn("job of an earlier attempt dropped", "job", job.ID, "run", a.RunID)
		return completeEmpty(ctx, w.cfg.Pool, job)
	}
	rows, err := w.cfg.Engine.ScoreRefs(ctx, run, a.Turns)
	if err != nil {
		return fmt.Errorf("job %d: %w", job.ID, err)
	}
	stmts, err := w.cfg.Store.TurnInserts(rows)
	if err != nil {
		return fmt.Errorf("job %d: %w", job.ID, err)
	}
	return pgx.BeginFunc(ctx, w.cfg.Pool, func(tx pgx.Tx) error {
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s.SQL, s.Args...); err != nil {
				return fmt.Errorf("job %d: recording turns: %w", job.ID, err)
			}
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
			return fmt.Errorf("job %d: completing: %w", job.ID, err)
		}
		return nil
	})
}

func completeEmpty(ctx context.Context, pool *pgxpool.Pool, job *river.Job[BatchArgs]) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
}

// NextRetry retries a failed or refused job soon, so another worker takes it.
func (w *batchWorker) NextRetry(*river.Job[BatchArgs]) time.Time {
	return time.Now().Add(time.Second)
}

// Timeout bounds one job.
func (w *batchWorker) Timeout(*river.Job[BatchArgs]) time.Duration { return w.cfg.JobTimeout }

// Worker is a running worker.
type Worker struct {
	client *river.Client[pgx.Tx]
}

// StartWorker starts pulling jobs.
func StartWorker(ctx context.Context, cfg WorkerConfig) (*Worker, error) {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if cfg.JobTimeout <= 0 {
		cfg.JobTimeout = 10 * time.Minute
	}
	if cfg.RescueAfter <= cfg.JobTimeout {
		cfg.RescueAfter = cfg.JobTimeout + time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &batchWorker{cfg: cfg}); err != nil {
		return nil, fmt.Errorf("starting worker: %w", err)
	}
	host, _ := os.Hostname()
	client, err := river.NewClient(riverpgxv5.New(cfg.Pool), &river.Config{
		ID:                   fmt.Sprintf("assay-%s-%d-%d", host, os.Getpid(), time.Now().UnixNano()),
		Queues:               map[string]river.QueueConfig{Name(cfg.PackSHA256, cfg.ScorerVer): {MaxWorkers: cfg.Concurrency}},
		Workers:              workers,
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: cfg.RescueAfter,
		FetchPollInterval:    200 * time.Millisecond,
		FetchCooldown:        20 * time.Millisecond,
		MaxAttempts:          25,
	})
	if err != nil {
		return nil, fmt.Errorf("starting worker: %w", err)
	}
	if err := client.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting worker: %w", err)
	}
	return &Worker{client: client}, nil
}

// Drain stops taking jobs and waits for the running ones to finish.
func (w *Worker) Drain(ctx context.Context) error { return w.client.Stop(ctx) }

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
