package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/verdict"
	"github.com/assay-eval/assay/host/verify"
	"github.com/assay-eval/assay/pkg/diag"
)

// verifyMemoryLimit is verify's soft memory limit (runtime/debug).
const verifyMemoryLimit = 160 << 20

// regressionDrop is how far a task's turn score must fall against the
// baseline to count as a regression.
const regressionDrop = 0.05

func (a *app) verifyCommand() *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "score whole harness runs: turn scores, gates, failure tags, verdicts and the Pareto frontier",
		UsageText: `assay verify --pack P (--run DIR)... | --turns FILE [--candidate ID] [--out DIR]
             [--db URL] [--in-process] [--baseline ID] [--fresh] [--format text|json]

Reads each candidate run (a harness directory with results/<label>.ndjson traces,
optional results.json metrics and state/<label>.{before,after}.json snapshots; or a
turns file with one JSON turn a line), scores every turn with the pack's scorers and
CEL checks, records each turn in the database as it completes, and writes
results.json and summary.json to --out. Running it again for the same pack and
candidate resumes an interrupted run; --fresh starts a new attempt.

Exit codes: 0 every candidate passed its gates; 1 a gate failed; 2 invalid input;
3 the host cannot run (invariant mismatch, plugin or database failure).

Example:
   assay verify --pack packs/example.yaml --run examples/runs/candidate-a \
       --run examples/runs/candidate-b --out out/`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "pack", Required: true, Usage: "eval pack `FILE`"},
			&cli.StringSliceFlag{Name: "run", Usage: "harness candidate `DIR` (repeatable)"},
			&cli.StringFlag{Name: "turns", Usage: "turns `FILE` (JSONL, one turn a line)"},
			&cli.StringFlag{Name: "candidate", Usage: "candidate `ID` (default: the run directory's or turns file's name)"},
			&cli.StringFlag{Name: "out", Usage: "write results.json and summary.json to `DIR`"},
			&cli.BoolFlag{Name: "in-process", Usage: "run the built-in scorers inside the host (debugging, performance baseline)"},
			&cli.StringFlag{Name: "baseline", Usage: "candidate `ID` to compare against for regressions"},
			&cli.BoolFlag{Name: "fresh", Usage: "start over as a new attempt instead of resuming"},
			&cli.IntFlag{Name: "batch-size", Value: 64, Usage: "cases per plugin call"},
			callTimeoutFlag(),
			formatFlag(),
		},
		Action: a.verify,
	}
}

// candidateSummary is one candidate in summary.json: the score summary and
// its verdict.
type candidateSummary struct {
	score.Summary
	RunID   int64              `json:"run_id,omitempty"`
	Verdict verdict.Evaluation `json:"verdict"`
}

// summaryFile is summary.json.
type summaryFile struct {
	Pack       packRef            `json:"pack"`
	Candidates []candidateSummary `json:"candidates"`
	Frontier   []string           `json:"frontier"`
}

type packRef struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

func (a *app) verify(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// A verification allocates fast (each trace is parsed and dropped)
		// while its live heap stays small: a soft limit keeps the resident
		// set bounded on long runs at little cost. GOMEMLIMIT overrides it.
		debug.SetMemoryLimit(verifyMemoryLimit)
	}
	runs, turnsFile := c.StringSlice("run"), c.String("turns")
	if (len(runs) == 0) == (turnsFile == "") {
		return invalidf("give --run DIR (one or more) or --turns FILE")
	}
	if len(runs) > 1 && c.String("candidate") != "" {
		return invalidf("--candidate names a single run; with several --run each candidate is its directory's name")
	}
	s, err := a.openSession(c, c.String("pack"), true, c.Bool("in-process"))
	if err != nil {
		return err
	}
	defer s.close()

	inputs, diags, err := readInputs(runs, turnsFile, c.String("candidate"))
	if err != nil {
		return invalid(err)
	}
	if len(diags) > 0 {
		fmt.Fprint(a.stderr, diags.Render(nil))
	}
	if diags.HasErrors() {
		return &ExitError{Code: ExitInvalid, Err: errors.New("the run's input is not valid")}
	}
	if err := s.start(c.Context); err != nil {
		return err
	}
	if err := s.recordPack(c.Context); err != nil {
		return err
	}

	// The baseline goes first, so every other candidate can be compared
	// with it as soon as it is scored.
	base := c.String("baseline")
	sort.SliceStable(inputs, func(i, j int) bool { return inputs[i].Candidate == base && inputs[j].Candidate != base })

	prog := newProgress(a.stderr, "verify")
	eng, err := verify.New(verify.Config{
		Pack:          s.pack,
		Scorers:       s.host,
		Descriptions:  s.descriptions,
		Identities:    s.identities,
		CEL:           s.cel,
		Store:         s.rt.store,
		ScorerVersion: s.scorerVersion,
		HostVersion:   s.hostVersion,
		BatchSize:     c.Int("batch-size"),
		Logger:        a.logger(),
		Progress:      prog.update,
	})
	if err != nil {
		return hostErr(err)
	}

	var rw *resultsWriter
	if dir := c.String("out"); dir != "" {
		if rw, err = newResultsWriter(dir); err != nil {
			return hostErr(err)
		}
		defer rw.abort()
	}
	sf := summaryFile{Pack: packRef{Name: s.pack.Name(), Path: s.pack.Path, SHA256: s.pack.SHA256}, Frontier: []string{}}
	if format == "text" {
		fmt.Fprintf(a.stdout, "pack %s (sha256 %s)\n", sf.Pack.Name, short(sf.Pack.SHA256))
	}
	var (
		summaries   []score.Summary
		baseline    map[string]float64
		inputErrors bool
	)
	if base != "" && (len(inputs) == 0 || inputs[0].Candidate != base) {
		if baseline, err = a.storedBaseline(c.Context, s, base); err != nil {
			return err
		}
	}
	for _, in := range inputs {
		out, err := eng.Verify(c.Context, in, verify.Options{Fresh: c.Bool("fresh")})
		prog.done()
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return &ExitError{Code: ExitHost, Err: fmt.Errorf("interrupted; run the same command again to resume: %w", err)}
			}
			return hostErr(err)
		}
		if len(out.Diagnostics) > 0 {
			fmt.Fprint(a.stderr, out.Diagnostics.Render(nil))
			inputErrors = inputErrors || out.Diagnostics.HasErrors()
		}
		cs := candidateSummary{Summary: out.Summary, RunID: out.RunID}
		var regressions []string
		if out.Candidate == base {
			baseline = turnScores(out.Results)
		} else if baseline != nil {
			regressions = regressed(out.Results, baseline)
		}
		cs.Verdict = verdict.Evaluate(verdict.FromRun(runEvidence(out, regressions)))
		if err := s.recordRun(c.Context, out, cs); err != nil {
			return hostErr(err)
		}
		if rw != nil {
			if err := rw.add(out.Results); err != nil {
				return hostErr(err)
			}
		}
		if format == "text" {
			printCandidate(a.stdout, out, cs)
		}
		out.Results = nil // written and summarised: a large run keeps only summaries
		sf.Candidates = append(sf.Candidates, cs)
		summaries = append(summaries, out.Summary)
	}
	sf.Frontier = frontier(s.pack.Scoring.ParetoFilter, summaries)

	if rw != nil {
		if err := rw.close(); err != nil {
			return hostErr(err)
		}
		if err := writeJSON(filepath.Join(c.String("out"), "summary.json"), sf); err != nil {
			return hostErr(err)
		}
	}
	if format == "json" {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sf); err != nil {
			return err
		}
	} else {
		printFrontier(a.stdout, sf.Frontier)
	}
	switch {
	case inputErrors:
		return &ExitError{Code: ExitInvalid, Err: errors.New("some turns could not be read; they are recorded as unscored")}
	case anyFailed(sf.Candidates):
		return &ExitError{Code: ExitGate}
	}
	return nil
}

// readInputs reads every --run directory or the --turns file.
func readInputs(runs []string, turnsFile, candidate string) ([]*verify.Input, diag.List, error) {
	if turnsFile != "" {
		return verify.ReadTurnsFile(turnsFile, candidate)
	}
	var inputs []*verify.Input
	var diags diag.List
	seen := map[string]string{}
	for _, dir := range runs {
		in, ds, err := verify.ReadRunDir(dir, candidate)
		if err != nil {
			return nil, nil, err
		}
		if prev, dup := seen[in.Candidate]; dup {
			return nil, nil, fmt.Errorf("runs %s and %s are both candidate %q; rename one directory", prev, dir, in.Candidate)
		}
		seen[in.Candidate] = dir
		diags = append(diags, ds...)
		inputs = append(inputs, in)
	}
	return inputs, diags, nil
}

// storedBaseline reads the baseline candidate's turn scores from its latest
// recorded run of the same pack and scorer version.
func (a *app) storedBaseline(ctx context.Context, s *session, id string) (map[string]float64, error) {
	results, err := verify.Recorded(ctx, s.rt.store, id, s.pack.SHA256, s.scorerVersion)
	if err != nil {
		return nil, invalidf("--baseline %s: %v", id, err)
	}
	return turnScores(results), nil
}

func turnScores(rs []verify.TurnResult) map[string]float64 {
	m := map[string]float64{}
	for _, r := range rs {
		if r.TurnScore != nil {
			m[r.Label] = *r.TurnScore
		}
	}
	return m
}

// regressed lists the tasks whose turn score fell by more than regressionDrop
// against the baseline (a scored baseline task that is now unscored or
// missing regressed too).
func regressed(rs []verify.TurnResult, baseline map[string]float64) []string {
	var out []string
	for _, r := range rs {
		b, ok := baseline[r.Label]
		if !ok {
			continue
		}
		if r.TurnScore == nil {
			out = append(out, fmt.Sprintf("%s: %s (baseline %.3f)", r.Label, r.Status, b))
			continue
		}
		if b-*r.TurnScore > regressionDrop+1e-9 {
			out = append(out, fmt.Sprintf("%s: turn score %.3f, baseline %.3f", r.Label, *r.TurnScore, b))
		}
	}
	return out
}

// runEvidence is what the verdict of a verified run is computed from.
func runEvidence(out *verify.Outcome, regressions []string) verdict.RunEvidence {
	ev := verdict.RunEvidence{TaskID: out.Candidate, Regressions: regressions, TasksTotal: len(out.Results)}
	var kpiSum float64
	for _, r := range out.Results {
		if r.Status != score.StatusScored {
			continue
		}
		ev.TasksScored++
		if r.KPIScore != nil {
			kpiSum += *r.KPIScore
		}
		for _, ch := range r.Checks {
			if ch.Score >= 1 {
				ev.ChecksPassed++
			} else {
				ev.ChecksFailed++
			}
		}
	}
	if ev.TasksScored > 0 {
		ev.MeanKPIScore = kpiSum / float64(ev.TasksScored)
	}
	return ev
}

// recordRun stores the candidate's summary and verdict with its run.
func (s *session) recordRun(ctx context.Context, out *verify.Outcome, cs candidateSummary) error {
	if s.rt.store == nil || out.RunID == 0 {
		return nil
	}
	sum, err := json.Marshal(cs.Summary)
	if err != nil {
		return err
	}
	v, err := json.Marshal(cs.Verdict)
	if err != nil {
		return err
	}
	if err := s.rt.store.FinishRun(ctx, out.RunID, "completed", sum, v); err != nil {
		return fmt.Errorf("recording run of %s: %w", out.Candidate, err)
	}
	return nil
}

// frontier is the Pareto frontier of the eligible candidates; with
// pareto_filter off, every eligible candidate, best mean score first.
func frontier(pareto bool, sums []score.Summary) []string {
	if pareto {
		f := score.Frontier(sums)
		if f == nil {
			f = []string{}
		}
		return f
	}
	var el []score.Summary
	for _, s := range sums {
		if s.Eligible {
			el = append(el, s)
		}
	}
	sort.SliceStable(el, func(i, j int) bool { return el[i].MeanScore > el[j].MeanScore })
	out := []string{}
	for _, s := range el {
		out = append(out, s.Candidate)
	}
	return out
}

func anyFailed(cs []candidateSummary) bool {
	for _, c := range cs {
		if !c.Gates.Passed {
			return true
		}
	}
	return false
}

// resultsWriter streams results.json, one candidate at a time, to a
// temporary file renamed into place when complete.
type resultsWriter struct {
	f     *os.File
	path  string
	first bool
}

func newResultsWriter(dir string) (*resultsWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("writing results: %w", err)
	}
	path := filepath.Join(dir, "results.json")
	f, err := os.CreateTemp(dir, ".results.json.*")
	if err != nil {
		return nil, fmt.Errorf("writing results: %w", err)
	}
	if _, err := f.WriteString("["); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing results: %w", err)
	}
	return &resultsWriter{f: f, path: path, first: true}, nil
}

func (w *resultsWriter) add(rs []verify.TurnResult) error {
	for i := range rs {
		b, err := json.MarshalIndent(&rs[i], "  ", "  ")
		if err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
		sep := ",\n  "
		if w.first {
			sep, w.first = "\n  ", false
		}
		if _, err := w.f.WriteString(sep); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
		if _, err := w.f.Write(b); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
	}
	return nil
}

func (w *resultsWriter) close() error {
	end := "\n]\n"
	if w.first {
		end = "]\n"
	}
	if _, err := w.f.WriteString(end); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	if err := os.Rename(w.f.Name(), w.path); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	w.f = nil
	return nil
}

// abort removes an unfinished results file.
func (w *resultsWriter) abort() {
	if w.f != nil {
		w.f.Close()
		os.Remove(w.f.Name())
	}
}

// writeJSON writes v as indented JSON, atomically.
func writeJSON(path string, v any) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	enc := json.NewEncoder(tmp)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// printCandidate prints one candidate's per-task table and summary.
func printCandidate(w io.Writer, out *verify.Outcome, cs candidateSummary) {
	fmt.Fprintf(w, "\ncandidate %s", out.Candidate)
	if out.Resumed > 0 {
		fmt.Fprintf(w, " (resumed: %d turns already recorded)", out.Resumed)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "  TASK\tSTATUS\tPROCESS\tKPI\tTURN\tTOOLS\tLATENCY\tFAILURE TAGS")
	for _, r := range out.Results {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.Label, r.Status, num(r.ProcessScore), num(r.KPIScore),
			num(r.TurnScore), r.ToolCalls, secs(r.LatencyS), strings.Join(r.FailureTags, ","))
	}
	tw.Flush()
	sm := cs.Summary
	fmt.Fprintf(w, "  mean score %.3f  finalize %.2f  errors %.2f  latency %s  tools %.1f  cost %s  unscored %d  missing %d\n",
		sm.MeanScore, sm.FinalizeRate, sm.ErrorRate, secs(sm.MeanLatencyS), sm.MeanToolCalls, usd(sm.MeanCostUSD), sm.Unscored, sm.Missing)
	if sm.Gates.Passed {
		fmt.Fprintln(w, "  gates: passed")
	} else {
		for _, g := range sm.Gates.Failed {
			fmt.Fprintf(w, "  gate FAILED: %s = %s (threshold %s)\n", g.Gate, fmtAny(g.Value), fmtAny(g.Threshold))
		}
	}
	fmt.Fprintf(w, "  verdict: %s (score %.3f, confidence %.2f)\n", cs.Verdict.Verdict, cs.Verdict.Score, cs.Verdict.Confidence)
}

// printFrontier prints the Pareto frontier line.
func printFrontier(w io.Writer, f []string) {
	if len(f) == 0 {
		fmt.Fprintln(w, "\nPareto frontier: none (no candidate passed every gate)")
		return
	}
	fmt.Fprintf(w, "\nPareto frontier: %s\n", strings.Join(f, ", "))
}

func num(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *p)
}

func secs(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.1fs", *p)
}

func usd(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("$%.4f", *p)
}

func fmtAny(v any) string {
	switch x := v.(type) {
	case float64:
		return fmt.Sprintf("%.3f", x)
	case *float64:
		return num(x)
	}
	return fmt.Sprint(v)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
