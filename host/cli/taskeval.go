package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/taskeval"
	"github.com/assay-eval/assay/pkg/diag"
)

func (a *app) taskEvalCommand() *cli.Command {
	return &cli.Command{
		Name:      "task-eval",
		Usage:     "score one finished task on the 0-100 task-evaluation contract and store the result",
		ArgsUsage: "FILE.json",
		UsageText: `assay task-eval FILE.json [--ai FILE] [--run RUN_ID] [--format text|json]

FILE.json describes one finished task: "taskId" (required), "status", "metadata"
{title, description, prUrl, updatedAt}, "mergeCommitSha", "commits" [{sha, subject,
message, author, timestamp}], "workflow" [{id, name, status: passed|failed|pending,
output, startedAt, completedAt}], "reviews" [{reviewer, verdict, summary, timestamp}],
"documents" [{key, revision, author, content, updatedAt}], "activity" [{timestamp,
action, outcome}], "agentLogs" [{timestamp, type, agent, text, detail}], "runAudit"
[{id, timestamp, domain, mutationType, target}]. Timestamps are RFC 3339.
The deterministic scores come from these signals, or from "deterministicScores"
{agentPerformance, taskOutcomeQuality, processCompliance} when the file gives them.

The AI evaluator's answer (--ai FILE, or "ai" in FILE.json) is JSON, or text with a
fenced JSON block: {"categories": {"<category>": {"score", "rationale", "evidence":
[{"id", "kind", "label", "value", "source"}]}}, "overallRationale"}. An evidence id
must name an entry of the evidence bundle. AI scores are advisory: each final score
is round(det*0.7 + ai*0.3) and the overall score weighs the finals .30/.45/.25.
Without an AI answer aiScore = deterministicScore (deterministic-only scoring).

The result is stored in --db: in a new eval run that is completed, or with --run in
an existing pending or running run (left running).

Example:
   assay task-eval task.json --ai evaluator-answer.md
   assay --db postgres://localhost/assay task-eval task.json --format json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ai", Usage: "the AI evaluator's answer `FILE` (JSON, or text with a fenced JSON block)"},
			&cli.StringFlag{Name: "run", Usage: "store the result in the existing eval run `RUN_ID`"},
			formatFlag(),
		},
		Action: a.taskEval,
	}
}

// taskEvalOutput is what --format json prints.
type taskEvalOutput struct {
	TaskID            string                   `json:"taskId"`
	RunID             string                   `json:"runId"`
	CategoryScores    []taskeval.CategoryScore `json:"categoryScores"`
	OverallScore      int                      `json:"overallScore"`
	Band              taskeval.Band            `json:"band"`
	DeterministicOnly bool                     `json:"deterministicOnly"`
	EvidenceBundle    *taskeval.Bundle         `json:"evidenceBundle"`
}

// taskEvalArgs are the command's file and flags (flags may follow FILE.json:
// Main moves them in front).
type taskEvalArgs struct {
	path, ai, run, format string
}

func parseTaskEvalArgs(c *cli.Context) (taskEvalArgs, error) {
	in := taskEvalArgs{ai: c.String("ai"), run: c.String("run")}
	if c.NArg() != 1 {
		for _, a := range c.Args().Slice() {
			if strings.HasPrefix(a, "-") && a != "-" {
				return in, invalidf("task-eval: flag %s needs a value", a)
			}
		}
		return in, invalidf("task-eval: give exactly one FILE.json (see 'assay task-eval --help')")
	}
	in.path = c.Args().First()
	var err error
	in.format, err = outputFormat(c)
	return in, err
}

func (a *app) taskEval(c *cli.Context) error {
	args, err := parseTaskEvalArgs(c)
	if err != nil {
		return err
	}
	path, format := args.path, args.format
	src, err := os.ReadFile(path)
	if err != nil {
		return invalidf("task-eval: reading %w", err)
	}
	sources := map[string][]byte{path: src}
	f, diags := taskeval.DecodeFile(path, src)
	if diags.HasErrors() {
		return renderInvalid(diags, sources)
	}
	ai := f.AI
	if aiPath := args.ai; aiPath != "" {
		if ai != nil {
			return invalidf("task-eval: the AI answer is given twice, by --ai %s and by \"ai\" in %s; give one", aiPath, path)
		}
		aiSrc, err := os.ReadFile(aiPath)
		if err != nil {
			return invalidf("--ai: reading %w", err)
		}
		sources[aiPath] = aiSrc
		var diags diag.List
		if ai, diags = taskeval.ParseAIAnswerFile(aiPath, aiSrc); diags.HasErrors() {
			return renderInvalid(diags, sources)
		}
	}

	det, _, why := f.Scores()
	bundle := taskeval.BuildBundle(&f.Task, "")
	res, err := taskeval.Evaluate(f.Task.TaskID, det, ai, why, bundle)
	if err != nil {
		var dl diag.List
		if errors.As(err, &dl) {
			return renderInvalid(dl, sources)
		}
		return invalid(err)
	}

	runID, err := a.storeTaskEval(c.Context, c.String(flagDB), args.run, res, a.dbOptions(c))
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(a.stdout, taskEvalOutput{TaskID: res.TaskID, RunID: runID, CategoryScores: res.CategoryScores,
			OverallScore: res.OverallScore, Band: res.Band, DeterministicOnly: res.DeterministicOnly,
			EvidenceBundle: res.EvidenceBundle})
	}
	fmt.Fprintf(a.stdout, "task %s  run %s\n", res.TaskID, runID)
	const row = "%-20s %4v %4v %6v  %s\n"
	fmt.Fprintf(a.stdout, row, "category", "det", "ai", "final", "band")
	for _, cs := range res.CategoryScores {
		fmt.Fprintf(a.stdout, row, cs.Category, cs.DeterministicScore, cs.AIScore, cs.FinalScore, cs.Band)
	}
	fmt.Fprintf(a.stdout, row, "overall", "", "", res.OverallScore, res.Band)
	if res.DeterministicOnly {
		fmt.Fprintln(a.stdout, "note: no AI answer given; aiScore = deterministicScore, so these scores are deterministic-only")
	}
	return nil
}

// renderInvalid prints diagnostics with their source lines as an
// invalid-input error.
func renderInvalid(diags diag.List, sources map[string][]byte) error {
	diags.Sort()
	return invalid(errors.New(strings.TrimSuffix(diags.Render(sources), "\n")))
}

// storeTaskEval writes res to the database: into run runID when given
// (which must be pending or running, and is left running), else into a new
// run that is completed (or failed, when the write fails). It returns the
// run's id.
func (a *app) storeTaskEval(ctx context.Context, dsn, runID string, res *taskeval.Result, opts []store.Option) (string, error) {
	st, err := store.Open(ctx, dsn, opts...)
	if err != nil {
		return "", hostErr(err)
	}
	defer st.Close()
	ts := taskeval.NewStore(st.DB(), st.Rebind)

	if runID != "" {
		run, err := ts.Run(ctx, runID)
		if errors.Is(err, taskeval.ErrRunNotFound) {
			return "", invalidf("--run: no eval run %q in %s", runID, store.Redact(dsn))
		}
		if err != nil {
			return "", hostErr(err)
		}
		switch run.Status {
		case taskeval.RunPending:
			if _, err := ts.SetStatus(ctx, runID, taskeval.RunRunning, ""); err != nil {
				return "", hostErr(err)
			}
		case taskeval.RunRunning:
		default:
			return "", invalidf("--run: eval run %s is %s; results can be added only to a pending or running run", runID, run.Status)
		}
		res.EvidenceBundle.SetRunID(runID)
		if err := ts.SaveResult(ctx, runID, res); err != nil {
			return "", hostErr(err)
		}
		return runID, nil
	}

	run, err := ts.CreateRun(ctx, res.TaskID)
	if err != nil {
		return "", hostErr(err)
	}
	if _, err := ts.SetStatus(ctx, run.ID, taskeval.RunRunning, ""); err != nil {
		return "", hostErr(err)
	}
	res.EvidenceBundle.SetRunID(run.ID)
	if err := ts.SaveResult(ctx, run.ID, res); err != nil {
		if _, ferr := ts.SetStatus(ctx, run.ID, taskeval.RunFailed, err.Error()); ferr != nil {
			err = errors.Join(err, ferr)
		}
		return "", hostErr(err)
	}
	if _, err := ts.SetStatus(ctx, run.ID, taskeval.RunCompleted, ""); err != nil {
		return "", hostErr(err)
	}
	return run.ID, nil
}
