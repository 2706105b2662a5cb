package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/queue"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
	"github.com/assay-eval/assay/pkg/diag"
)

func (a *app) runsCommand() *cli.Command {
	return &cli.Command{
		Name:  "runs",
		Usage: "follow runs queued with verify --queue --detach (docs/scale.md)",
		UsageText: `assay runs wait RUN_ID --pack P [--out DIR] | assay runs show RUN_ID

Example:
   id=$(assay --db postgres://assay@db/assay verify --pack packs/example.yaml --run runs/a --queue --detach)
   assay --db postgres://assay@db/assay runs wait "$id" --pack packs/example.yaml --out out/`,
		Subcommands: []*cli.Command{{
			Name:      "wait",
			Usage:     "wait for a queued run's jobs, then verify it from its records; exit as verify would",
			UsageText: "assay runs wait RUN_ID --pack P [--out DIR] [--format text|json]\n\nExample:\n   assay runs wait 42 --pack packs/example.yaml --out out/",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "pack", Required: true, Usage: "the run's eval pack `FILE`"},
				&cli.StringFlag{Name: "out", Usage: "write results.json and summary.json to `DIR`"},
				&cli.DurationFlag{Name: "queue-poll", Value: 500 * time.Millisecond, Usage: "how often to check the run's jobs"},
				&cli.BoolFlag{Name: "in-process", Usage: "run the built-in scorers inside the host"},
				formatFlag(),
			},
			Action: a.runsWait,
		}, {
			Name:      "show",
			Usage:     "a queued run's progress or, once verified, its summary",
			UsageText: "assay runs show RUN_ID [--format text|json]\n\nExample:\n   assay runs show 42 --format json",
			Flags:     []cli.Flag{formatFlag()},
			Action:    a.runsShow,
		}},
	}
}

// runsArgs are a runs command's output format, RUN_ID and the queue's pool.
func runsArgs(c *cli.Context, what string) (string, int64, *pgxpool.Pool, error) {
	format, err := outputFormat(c)
	if err != nil {
		return "", 0, nil, err
	}
	id, err := runArg(c)
	if err != nil {
		return "", 0, nil, err
	}
	pool, err := openQueue(c, what)
	return format, id, pool, err
}

// runArg is the RUN_ID argument.
func runArg(c *cli.Context) (int64, error) {
	if c.NArg() != 1 {
		return 0, invalidf("give one RUN_ID")
	}
	id, err := strconv.ParseInt(c.Args().First(), 10, 64)
	if err != nil || id <= 0 {
		return 0, invalidf("RUN_ID %q: want a positive integer", c.Args().First())
	}
	return id, nil
}

func (a *app) runsWait(c *cli.Context) error {
	format, id, pool, err := runsArgs(c, "runs wait")
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := queue.Wait(c.Context, pool, id, c.Duration("queue-poll"), nil); err != nil {
		return hostErr(err)
	}
	s, err := a.openSession(c, c.String("pack"), true, c.Bool("in-process"))
	if err != nil {
		return err
	}
	defer s.close()
	run, in, none, err := verify.StoredInput(c.Context, s.rt.store, id)
	if err != nil {
		return hostErr(err)
	}
	if run.PackSHA256 != s.pack.SHA256 || run.ScorerVersion != s.scorerVersion {
		return invalidf("run %d was recorded with pack %s and scorer version %s; this host has %s and %s",
			id, short(run.PackSHA256), short(run.ScorerVersion), short(s.pack.SHA256), short(s.scorerVersion))
	}
	if len(none) > 0 {
		fmt.Fprintf(a.stderr, "runs wait: %d turns of run %d have no stored evidence and are left out: %v\n", len(none), id, none)
	}
	rep, err := verify.Run(c.Context, verify.Request{Engine: s.engineConfig(64, a.logger(), nil), Inputs: []*verify.Input{in},
		OutDir: c.String("out"), Start: s.start, Diagnostics: func(ds diag.List) { fmt.Fprint(a.stderr, ds.Render(nil)) }})
	if err != nil {
		return verifyErr(err)
	}
	return a.printReport(rep, format)
}

// runView is `runs show`'s JSON.
type runView struct {
	RunID     int64           `json:"run_id"`
	Candidate string          `json:"candidate"`
	Status    string          `json:"status"`
	Jobs      queue.Counts    `json:"jobs"`
	Summary   json.RawMessage `json:"summary,omitempty"` // once verified
}

func (a *app) runsShow(c *cli.Context) error {
	format, id, pool, err := runsArgs(c, "runs show")
	if err != nil {
		return err
	}
	defer pool.Close()
	st, err := store.Open(c.Context, c.String(flagDB), a.dbOptions(c)...)
	if err != nil {
		return hostErr(err)
	}
	defer st.Close()
	v, err := showRun(c.Context, st, pool, id)
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(a.stdout, v)
	}
	j := v.Jobs
	fmt.Fprintf(a.stdout, "run %d (%s): %s; jobs: %d done, %d available, %d running, %d retrying, %d discarded\n",
		v.RunID, v.Candidate, v.Status, j.Completed, j.Available, j.Running, j.Retryable, j.Discarded)
	if v.Summary != nil {
		fmt.Fprintf(a.stdout, "%s\n", v.Summary)
	}
	return nil
}

// showRun reads a run and its jobs.
func showRun(ctx context.Context, st *store.Store, pool *pgxpool.Pool, id int64) (*runView, error) {
	r, err := st.RunByID(ctx, id)
	if err != nil {
		return nil, invalidf("run %d: %v", id, err)
	}
	c, err := queue.RunCounts(ctx, pool, id)
	if err != nil {
		return nil, hostErr(err)
	}
	v := &runView{RunID: r.ID, Candidate: r.Candidate, Status: r.Status, Jobs: c}
	if c.Pending() == 0 && r.Status == store.RunCompleted {
		v.Summary = r.Summary
	}
	return v, nil
}
