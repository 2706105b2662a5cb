package verify

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/pkg/diag"
)

// Request is one verification: which candidates, against what (Engine), and
// what to do with the results. `assay verify` builds one from its flags; a
// server or a queue worker builds the same.
type Request struct {
	// Engine is the pack, scorers and store to verify with.
	Engine Config
	// Runs are harness candidate directories; TurnsFile is a turns file;
	// OTLPFile is an OTLP/JSON traces file (docs/otel.md). Give one of them.
	Runs      []string
	TurnsFile string
	OTLPFile  string
	// TurnsIndex, when set, is TurnsFile indexed ahead (IndexTurnsAhead
	// with this request's TurnsFile, Candidate and AllowOutsidePaths; Run
	// indexes the file itself when they differ). Run takes it once; its
	// caller still closes it.
	TurnsIndex *TurnsIndex
	// OTLPLabelAttr is the attribute naming an OTLP trace's task; empty
	// means DefaultLabelAttr.
	OTLPLabelAttr string
	// Candidate overrides the candidate ID of a single run or of a turns
	// file's turns that name none.
	Candidate string
	// Baseline is the candidate regressions are measured against: one of
	// this request's candidates, else its latest recorded run of the same
	// pack and scorer version.
	Baseline string
	// AllowOutsidePaths lets the paths of a run (a turns file's trace_file
	// and snapshot paths, the symbolic links of a run directory) leave its
	// directory (docs/run-input.md).
	AllowOutsidePaths bool
	// Inputs are candidates given already read (stored evidence, for
	// rescore); verified after Runs and TurnsFile.
	Inputs []*Input
	// PolicyVersion and SkillVersion, when set, are every candidate's,
	// over any run.json (drift units, docs/evidence.md).
	PolicyVersion string
	SkillVersion  string
	// Fresh starts every candidate over as a new attempt.
	Fresh bool
	// Seed seeds every bootstrap interval (docs/scoring.md); nil means
	// score.DefaultSeed.
	Seed *uint64
	// OutDir, when set, receives results.json (streamed) and summary.json
	// (the Report).
	OutDir string
	// ScorerErrorShare is the share of a candidate's turns a scorer may fail
	// to score before it counts as unable to run; zero or less means
	// DefaultScorerErrorShare. A scorer that scores none of its turns is
	// always unable to run.
	ScorerErrorShare float64

	// Queue, when set, has the turns scored elsewhere: Run records every
	// candidate's evidence (Engine.RecordEvidence) and calls Queue for each
	// to queue its turns, then QueueWait with every queued run, which returns
	// once their turns are recorded; then it verifies each candidate,
	// reusing them (docs/scale.md).
	Queue     func(ctx context.Context, q *Enqueued) error
	QueueWait func(ctx context.Context, runIDs []int64) error

	// Candidates, when set, is called with the candidates read, before
	// anything is recorded; its error ends Run.
	Candidates func(ids []string) error

	// Start, when set, is called once the inputs are read and before any
	// turn is scored (to launch the scorers, say); its error ends Run.
	Start func(ctx context.Context) error
	// Diagnostics, when set, receives input problems as they are found.
	Diagnostics func(diag.List)
	// Govern, when set, is called once every candidate is verified and
	// scorer health is known, before summary.json is written: it records
	// the run history, marks suspect scorers in ScorerHealth and lists the
	// fired kill criteria (governance.AfterVerify, docs/governance.md).
	Govern func(ctx context.Context, rep *Report) error
	// OnCandidate, when set, is called as each candidate is verified, with
	// its outcome (its Results are dropped after the call: a large run
	// keeps only summaries) and its report entry.
	OnCandidate func(out *Outcome, c *CandidateReport)
}

// InputError is a request Run cannot verify at all: an unreadable turns
// file, two runs with one candidate ID, an unknown baseline.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Run verifies every candidate of req and returns the report. A candidate
// whose input cannot be read is listed in Report.Errors and the others are
// verified. Run returns an *InputError when the request cannot be verified
// at all, an error wrapping context.Canceled when interrupted (a rerun
// resumes), and any other error when the host failed (the scorers, the
// store, the output directory).
func Run(ctx context.Context, req Request) (*Report, error) {
	p := req.Engine.Pack
	if p == nil {
		return nil, errors.New("verify: a pack is required")
	}
	if req.ScorerErrorShare <= 0 {
		req.ScorerErrorShare = DefaultScorerErrorShare
	}
	rep := &Report{SchemaVersion: SummarySchemaVersion, Pack: PackRef{Name: p.Name(), Path: p.Path, SHA256: p.SHA256}, Candidates: []CandidateReport{},
		Frontier: []string{}, Errors: []CandidateError{}, ScorerFailures: []ScorerFailure{}}
	req.Engine.tasks = newTaskIndex(p) // shared with the engine, which fills it in
	r := &runner{req: req, rep: rep, tasks: req.Engine.tasks.byLabel}
	inputs, err := r.readInputs()
	if err != nil {
		return nil, err
	}
	defer closeInputs(inputs)
	if req.Candidates != nil {
		ids := make([]string, len(inputs))
		for i, in := range inputs {
			ids[i] = in.Candidate
		}
		if err := req.Candidates(ids); err != nil {
			return nil, err
		}
	}
	// The pack's tasks are stored while the scorers start and the engine is
	// built, and before any candidate is (docs/storage.md, "Recording"). The
	// engine is built while the scorers start (it needs only the pack and
	// the scorers' descriptions); when both fail, the scorers' error is the
	// one reported, as when one followed the other.
	packRecorded := startRecordPack(ctx, req.Engine)
	defer packRecorded.stop()
	built := startEngine(req.Engine)
	if req.Start != nil {
		if err := req.Start(ctx); err != nil {
			built.wait()
			return nil, err
		}
	}
	if r.eng, err = built.wait(); err != nil {
		return nil, err
	}
	if err := packRecorded.wait(); err != nil {
		return nil, err
	}
	if err := r.loadBaseline(ctx, inputs); err != nil {
		return nil, err
	}
	if req.OutDir != "" {
		if r.rw, err = newResultsWriter(req.OutDir); err != nil {
			return nil, err
		}
		defer r.rw.abort()
	}
	if req.Queue != nil {
		if err := r.queueAll(ctx, inputs); err != nil {
			return nil, err
		}
	}
	var done finished // each verified candidate, kept encoded until the run ends
	for _, in := range inputs {
		c, err := r.verify(ctx, in)
		if err != nil {
			return nil, err
		}
		done.add(c)
	}
	if rep.Candidates, err = done.reports(); err != nil {
		return nil, err
	}
	sums := make([]score.Summary, len(rep.Candidates))
	for i := range rep.Candidates {
		sums[i] = rep.Candidates[i].Summary
	}
	if w, ok := req.Engine.Scorers.(interface{ Warnings() []string }); ok {
		rep.Warnings = w.Warnings()
	}
	rep.Frontier = Frontier(p.Scoring.ParetoFilter, sums)
	rep.NotDistinguishable = notDistinguishable(rep.Frontier, sums)
	if rep.ScorerHealth, err = scorerHealth(ctx, req.Engine); err != nil {
		return nil, err
	}
	if req.Govern != nil {
		if err := req.Govern(ctx, rep); err != nil {
			return nil, err
		}
	}
	if r.rw != nil {
		if err := r.rw.close(); err != nil {
			return nil, err
		}
		if err := writeFileAtomic(filepath.Join(req.OutDir, "summary.json"), rep.WriteJSON); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// runner is one Run in progress.
type runner struct {
	req       Request
	rep       *Report
	eng       *Engine
	rw        *resultsWriter
	baseline  map[string]score.Sample // task label -> the baseline's task score
	baseUnits Units                   // the baseline run's drift units
	tasks     map[string]*taskInfo    // the pack's tasks by label (the engine's; read only their task here)
}

// isTask reports whether label is a task of the pack.
func (r *runner) isTask(label string) bool {
	_, ok := r.tasks[label]
	return ok
}

// scorerOf is the scorer of the task label, "" for a label that is not a task.
func (r *runner) scorerOf(label string) string {
	if info, ok := r.tasks[label]; ok {
		return string(info.task.Scorer)
	}
	return ""
}

func (r *runner) diagnose(ds diag.List) {
	if len(ds) == 0 {
		return
	}
	r.rep.Diagnostics = append(r.rep.Diagnostics, ds...)
	for _, d := range ds {
		switch {
		case d.Severity != diag.Warning:
		case len(r.rep.InputWarnings) < MaxInputWarnings:
			r.rep.InputWarnings = append(r.rep.InputWarnings, d)
		default:
			r.rep.InputWarningsOmitted++
		}
	}
	if r.req.Diagnostics != nil {
		r.req.Diagnostics(ds)
	}
}

// readInputs reads the turns file or every run directory, baseline first so
// every other candidate can be compared with it as soon as it is scored. A
// run directory that cannot be read is listed in the report's errors.
func (r *runner) readInputs() ([]*Input, error) {
	var inputs []*Input
	if file := cmp.Or(r.req.TurnsFile, r.req.OTLPFile); file != "" {
		var ins []*Input
		var ds diag.List
		var err error
		if r.req.TurnsFile != "" {
			// Indexed, not read: each candidate's turns are decoded when it is
			// verified, so memory does not grow with the turns.
			if r.req.TurnsIndex.of(&r.req) {
				ins, ds, err = r.req.TurnsIndex.take(r.isTask)
			} else {
				ins, ds, err = indexTurnsFile(file, r.req.Candidate, WithOutsidePaths(r.req.AllowOutsidePaths), withTasks(r.isTask))
			}
		} else {
			ins, ds, err = ReadOTLPFile(file, OTLPOptions{Candidate: r.req.Candidate, LabelAttr: r.req.OTLPLabelAttr})
		}
		if err != nil {
			return nil, &InputError{Err: err}
		}
		r.diagnose(ds)
		if ds.HasErrors() {
			return nil, &InputError{Err: fmt.Errorf("%s is not valid", file)}
		}
		if len(ins) == 0 {
			// Nothing to verify is never a pass: an empty upload or a
			// truncated file would otherwise exit 0 with no candidate.
			return nil, &InputError{Err: fmt.Errorf("%s holds no turns: nothing to verify", file)}
		}
		inputs = ins
	}
	seen := map[string]string{}
	for _, dir := range r.req.Runs {
		in, ds, err := ReadRunDirTasks(dir, r.req.Candidate, r.isTask, WithOutsidePaths(r.req.AllowOutsidePaths))
		r.diagnose(ds)
		if err == nil && ds.HasErrors() {
			err = ds.Errors()
		}
		if err != nil {
			r.rep.Errors = append(r.rep.Errors, CandidateError{Candidate: candidateOf(dir, r.req.Candidate), Input: dir, Error: err.Error()})
			continue
		}
		if prev, dup := seen[in.Candidate]; dup {
			return nil, &InputError{Err: fmt.Errorf("runs %s and %s are both candidate %q; rename one directory", prev, dir, in.Candidate)}
		}
		seen[in.Candidate] = dir
		inputs = append(inputs, in)
	}
	inputs = append(inputs, r.req.Inputs...)
	for _, in := range inputs {
		in.PolicyVersion = cmp.Or(r.req.PolicyVersion, in.PolicyVersion)
		in.SkillVersion = cmp.Or(r.req.SkillVersion, in.SkillVersion)
	}
	base := r.req.Baseline
	sort.SliceStable(inputs, func(i, j int) bool { return inputs[i].Candidate == base && inputs[j].Candidate != base })
	return inputs, nil
}

// candidateOf is the candidate ID of a run directory: the override, else the
// directory's name.
func candidateOf(dir, override string) string {
	if override != "" {
		return override
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return filepath.Base(abs)
	}
	return filepath.Base(dir)
}

// loadBaseline reads a baseline that is not one of the request's candidates
// from its latest recorded run of the same pack and scorer version.
func (r *runner) loadBaseline(ctx context.Context, inputs []*Input) error {
	base := r.req.Baseline
	if base == "" || (len(inputs) > 0 && inputs[0].Candidate == base) {
		return nil
	}
	cfg := r.req.Engine
	run, results, err := recordedRun(ctx, cfg.Store, base, cfg.Pack.SHA256, cfg.ScorerVersion)
	if err != nil {
		return &InputError{Err: fmt.Errorf("baseline %s: %w", base, err)}
	}
	r.baseline, r.baseUnits = taskScores(results), RunUnits(run)
	return nil
}

// verify verifies one candidate: scores it, compares it with the baseline,
// gives its verdict, records the run's summary and verdict and streams its
// turns to results.json.
func (r *runner) verify(ctx context.Context, in *Input) (*CandidateReport, error) {
	fresh := r.req.Fresh && r.req.Queue == nil // a queued attempt is the one to finish
	out, err := r.eng.Verify(ctx, in, Options{Fresh: fresh, Seed: r.req.Seed})
	if errors.Is(err, errTurnsChanged) {
		return nil, &InputError{Err: fmt.Errorf("verifying %s: %w", in.Candidate, err)}
	}
	if err != nil {
		return nil, fmt.Errorf("verifying %s: %w", in.Candidate, err)
	}
	r.diagnose(out.Diagnostics)
	r.rep.UnreadableTurns += len(out.Diagnostics.Errors())
	c := &CandidateReport{Summary: out.Summary, RunID: out.RunID, Reused: out.Reused,
		Rescored: len(out.Rescored), RescoredLabels: nonNil(out.Rescored),
		Retried: len(out.Retried), RetriedLabels: nonNil(out.Retried),
		ScoredOnRetry: len(out.ScoredOnRetry), ScoredOnRetryLabels: nonNil(out.ScoredOnRetry),
		Ignored: len(out.Ignored), IgnoredLabels: nonNil(out.Ignored)}
	var regressions []string
	if out.Candidate == r.req.Baseline {
		r.baseline, r.baseUnits = taskScores(out.Results), r.eng.units(in)
	} else if r.baseline != nil {
		regressions = regressed(out.Results, r.baseline)
		seed := score.DefaultSeed
		if r.req.Seed != nil {
			seed = *r.req.Seed
		}
		pd := score.Compare(r.req.Baseline, taskScores(out.Results), r.baseline,
			r.req.Engine.Pack.Scoring.Promotion.RegressionMinDelta, 0, seed)
		c.Paired = &pd
		c.Drift = DriftBetween(r.baseUnits, r.eng.units(in))
	}
	c.Verdict = runVerdict(out, regressions, c.Paired)
	if err := finishRun(ctx, r.req.Engine.Store, out, c); err != nil {
		return nil, err
	}
	if r.rw != nil {
		if err := r.rw.add(out.Results); err != nil {
			return nil, err
		}
	}
	r.rep.ScorerFailures = append(r.rep.ScorerFailures, scorerFailures(out.Candidate, out.Results, r.scorerOf, r.req.ScorerErrorShare)...)
	if r.req.OnCandidate != nil {
		r.req.OnCandidate(out, c)
	}
	out.Results = nil // written and summarised: a large run keeps only summaries
	return c, nil
}

// queueAll records every candidate's evidence and queues its turns, then
// waits until the queued turns are recorded.
func (r *runner) queueAll(ctx context.Context, inputs []*Input) error {
	var ids []int64
	for _, in := range inputs {
		q, _, err := r.eng.RecordEvidence(ctx, in, r.req.Fresh)
		if err != nil {
			return fmt.Errorf("queueing %s: %w", in.Candidate, err)
		}
		if err := r.req.Queue(ctx, q); err != nil {
			return fmt.Errorf("queueing %s: %w", in.Candidate, err)
		}
		ids = append(ids, q.Run.ID)
	}
	if r.req.QueueWait == nil {
		return nil
	}
	if err := r.req.QueueWait(ctx, ids); err != nil {
		return fmt.Errorf("waiting for the queue: %w", err)
	}
	return nil
}

// engineBuild is New running in the background.
type engineBuild struct {
	done chan struct{}
	eng  *Engine
	err  error // eng and err are set before done is closed
}

// startEngine runs New(cfg) in the background.
func startEngine(cfg Config) *engineBuild {
	b := &engineBuild{done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.eng, b.err = New(cfg)
	}()
	return b
}

// wait returns New's engine and error once it is done.
func (b *engineBuild) wait() (*Engine, error) {
	<-b.done
	return b.eng, b.err
}

// packRecording is recordPack running in the background.
type packRecording struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error // set before done is closed
}

// startRecordPack runs recordPack in the background.
func startRecordPack(ctx context.Context, cfg Config) *packRecording {
	ctx, cancel := context.WithCancel(ctx)
	r := &packRecording{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = recordPack(ctx, cfg)
	}()
	return r
}

// wait returns recordPack's error once it is done.
func (r *packRecording) wait() error {
	<-r.done
	return r.err
}

// stop interrupts recordPack if it is still running (Run is returning
// early: its transaction is rolled back) and waits for it to end.
func (r *packRecording) stop() {
	r.cancel()
	<-r.done
}

// recordPack stores one row per pack task, each under the database's
// scorer CHECK.
func recordPack(ctx context.Context, cfg Config) error {
	if cfg.Store == nil {
		return nil
	}
	p := cfg.Pack
	rows := make([]store.PackTask, len(p.Tasks))
	for i, t := range p.Tasks {
		rows[i] = store.PackTask{PackSHA256: p.SHA256, Company: p.Company.ID, Label: t.Label,
			Scorer: string(t.Scorer), Weight: t.Weight, SliceTags: t.SliceTags}
	}
	if err := cfg.Store.UpsertPackTasks(ctx, rows); err != nil {
		return fmt.Errorf("recording pack %s: %w", p.Path, err)
	}
	return nil
}

// finishRun stores the candidate's summary and verdict with its run.
func finishRun(ctx context.Context, st *store.Store, out *Outcome, c *CandidateReport) error {
	if st == nil || out.RunID == 0 {
		return nil
	}
	sum, err := json.Marshal(c.Summary)
	if err != nil {
		return fmt.Errorf("recording run of %s: %w", out.Candidate, err)
	}
	v, err := json.Marshal(c.Verdict)
	if err != nil {
		return fmt.Errorf("recording run of %s: %w", out.Candidate, err)
	}
	if err := st.FinishRun(ctx, out.RunID, "completed", sum, v); err != nil {
		return fmt.Errorf("recording run of %s: %w", out.Candidate, err)
	}
	return nil
}

// nonNil keeps an empty list a JSON array.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
