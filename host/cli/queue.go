package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/queue"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
)

// oneCandidate is verify.Request.Candidates with --detach: a turns or
// OTLP file of several candidates is refused, exit 2.
func oneCandidate(c *cli.Context) func([]string) error {
	if !c.Bool("detach") {
		return nil
	}
	return func(ids []string) error {
		if len(ids) != 1 {
			return invalidf("--detach queues one candidate; the input has %d: %v", len(ids), ids)
		}
		return nil
	}
}

// errDetached ends verify --queue --detach once its jobs are queued.
var errDetached = errors.New("detached")

// queueFlags are verify's queue flags (docs/scale.md).
func queueFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "queue", Usage: "score the turns on `assay worker`s through the Postgres queue (docs/scale.md)"},
		&cli.BoolFlag{Name: "detach", Usage: "with --queue and one --run: print the run id and return once its jobs are queued (assay runs wait|show)"},
		&cli.DurationFlag{Name: "queue-poll", Value: 500 * time.Millisecond, Usage: "with --queue: how often to check the run's jobs"},
	}
}

// openQueue opens the queue's pool on the --db database: Postgres only,
// exit 2 otherwise.
func openQueue(c *cli.Context, what string) (*pgxpool.Pool, error) {
	dsn := c.String(flagDB)
	if !store.IsPostgresURL(dsn) {
		return nil, invalidf("%s needs a postgres:// database (--db); %s is SQLite", what, store.Redact(dsn))
	}
	pool, err := store.OpenPool(c.Context, dsn)
	if err != nil {
		return nil, hostErr(err)
	}
	return pool, nil
}

// verifyPool is the queue's pool with --queue, else nil, and its closer.
func (a *app) verifyPool(c *cli.Context) (*pgxpool.Pool, func(), error) {
	if !c.Bool("queue") {
		if c.Bool("detach") {
			return nil, nil, invalidf("--detach needs --queue")
		}
		return nil, func() {}, nil
	}
	if c.Bool("detach") && len(c.StringSlice("run")) > 1 {
		return nil, nil, invalidf("--detach queues one candidate: give one --run DIR")
	}
	pool, err := openQueue(c, "verify --queue")
	if err != nil {
		return nil, nil, err
	}
	return pool, pool.Close, nil
}

// queueScorer is verify.Request.Queue for `verify --queue` (nil without a
// pool): it queues a candidate's turns in jobs of --batch-size turns.
func (a *app) queueScorer(c *cli.Context, pool *pgxpool.Pool, s *session) func(context.Context, *verify.Enqueued) error {
	if pool == nil {
		return nil
	}
	size := queue.DefaultBatchSize
	if c.IsSet("batch-size") {
		size = c.Int("batch-size")
	}
	return func(ctx context.Context, q *verify.Enqueued) error {
		n, err := queue.Enqueue(ctx, pool, q, s.pack.SHA256, s.scorerVersion, size)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "queue: run %d (%s): %d turns in %d jobs on queue %s; %d turns not queued (recorded already or unreadable)\n",
			q.Run.ID, q.Candidate, len(q.Refs), n, queue.Name(s.pack.SHA256, s.scorerVersion), q.Recorded)
		if c.Bool("detach") {
			fmt.Fprintf(a.stdout, "%d\n", q.Run.ID)
			return errDetached
		}
		return nil
	}
}

// queueWaiter is verify.Request.QueueWait: it shows each run's jobs as
// they finish until none is pending.
func (a *app) queueWaiter(c *cli.Context, pool *pgxpool.Pool) func(context.Context, []int64) error {
	if pool == nil {
		return nil
	}
	return func(ctx context.Context, ids []int64) error {
		for _, id := range ids {
			last := -1
			err := queue.Wait(ctx, pool, id, c.Duration("queue-poll"), func(ct queue.Counts) {
				if ct.Completed != last {
					last = ct.Completed
					fmt.Fprintf(a.stderr, "queue: run %d: %d/%d jobs done, %d running, %d retrying\n",
						id, ct.Completed, ct.Completed+ct.Pending()+ct.Discarded, ct.Running, ct.Retryable)
				}
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
}

func (a *app) workerCommand() *cli.Command {
	return &cli.Command{
		Name:  "worker",
		Usage: "score queued turns (verify --queue) with this host's plugins, until SIGTERM",
		UsageText: `assay worker --pack P [--concurrency N] [--db URL] [--plugin-dir DIR] [--job-timeout D]

Pulls batch jobs from the Postgres queue, scores their turns from the stored
evidence with this host's plugins, and records the turn rows in the transaction
that completes the job. A job whose run was recorded with another pack or other
scorer digests is refused (logged) and retried on another worker. SIGTERM or
SIGINT drains: running jobs finish, no new job is taken (docs/scale.md).

Example:
   assay --db postgres://assay@db/assay worker --pack packs/example.yaml --concurrency 2`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "pack", Required: true, Usage: "eval pack `FILE` of the runs to score"},
			&cli.IntFlag{Name: "concurrency", Value: 1, Usage: "jobs scored at once"},
			&cli.DurationFlag{Name: "job-timeout", Value: 10 * time.Minute, Usage: "a job running longer is cancelled; a killed worker's jobs are retried after it"},
			&cli.BoolFlag{Name: "in-process", Usage: "run the built-in scorers inside the host"},
			callTimeoutFlag(),
		},
		Action: a.worker,
	}
}

func (a *app) worker(c *cli.Context) error {
	pool, err := openQueue(c, "assay worker")
	if err != nil {
		return err
	}
	defer pool.Close()
	s, err := a.openSession(c, c.String("pack"), true, c.Bool("in-process"))
	if err != nil {
		return err
	}
	defer s.close()
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := s.start(ctx); err != nil {
		return err
	}
	eng, err := verify.New(s.engineConfig(64, a.logger(), nil))
	if err != nil {
		return hostErr(err)
	}
	timeout := c.Duration("job-timeout")
	w, err := queue.StartWorker(context.WithoutCancel(ctx), queue.WorkerConfig{Engine: eng, Store: s.rt.store, Pool: pool,
		PackSHA256: s.pack.SHA256, ScorerVer: s.scorerVersion, Concurrency: c.Int("concurrency"),
		JobTimeout: timeout, RescueAfter: timeout + time.Second, Logger: a.logger()})
	if err != nil {
		return hostErr(err)
	}
	fmt.Fprintf(a.stderr, "worker: scoring pack %s with scorer version %s from queue %s\n", s.pack.Name(), short(s.scorerVersion),
		queue.Name(s.pack.SHA256, s.scorerVersion))
	<-ctx.Done()
	fmt.Fprintln(a.stderr, "worker: draining")
	if err := w.Drain(context.WithoutCancel(ctx)); err != nil && !errors.Is(err, context.Canceled) {
		return hostErr(err)
	}
	fmt.Fprintln(a.stderr, "worker: drained")
	return nil
}

// queueStatus is the queue of a Postgres database for doctor; nil for
// SQLite. Doctor installs nothing: a database without River's tables shows
// the queue as not installed.
func queueStatus(ctx context.Context, dsn string) *queue.Status {
	if !store.IsPostgresURL(dsn) {
		return nil
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return &queue.Status{Error: store.RedactError(err, dsn).Error()}
	}
	defer pool.Close()
	st := queue.ReadStatus(ctx, pool)
	return &st
}

// printQueue prints doctor's queue lines.
func printQueue(w io.Writer, st *queue.Status) {
	switch {
	case st == nil:
		return
	case st.Error != "":
		fmt.Fprintf(w, "FAIL  %-11s %s\n", "queue", st.Error)
		return
	case !st.Installed:
		fmt.Fprintf(w, "note  %-11s not installed (verify --queue or assay worker installs it)\n", "queue")
		return
	}
	j := st.Jobs
	fmt.Fprintf(w, "ok    %-11s jobs: %d available, %d running, %d retryable, %d discarded, %d completed\n",
		"queue", j.Available, j.Running, j.Retryable, j.Discarded, j.Completed)
	if len(st.Workers) == 0 {
		fmt.Fprintf(w, "note  %-11s no worker took a job in the last %s\n", "queue", queue.RecentWindow)
	}
	for _, wk := range st.Workers {
		fmt.Fprintf(w, "ok    %-11s worker %s last took a job at %s\n", "queue", wk.ID, wk.LastSeen.UTC().Format(time.RFC3339))
	}
}
