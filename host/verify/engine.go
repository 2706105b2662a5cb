package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/assay-eval/assay/host/kpi"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/state"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/pkg/batchrun"
	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/excerpt"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/pkg/trace"
)

// CompositeID is the scorer that averages the scorers upstream of it.
const CompositeID scorer.ID = "composite"

// Scorers scores batches of cases; the plugin host (pluginhost.Host) is one.
type Scorers interface {
	Score(ctx context.Context, id scorer.ID, cases []*scorer.Case) []batchrun.Outcome
}

// Config is what an Engine verifies with.
type Config struct {
	Pack         *pack.Pack
	Scorers      Scorers
	Descriptions map[scorer.ID]scorer.Description
	Identities   map[scorer.ID]ScorerRef // version and sha256 of each scorer used
	CEL          *kpi.Set                // compiled CEL checks; nil when the pack has none
	Store        *store.Store            // nil: nothing is recorded (assay score)

	ScorerVersion string
	HostVersion   string

	BatchSize int // cases per plugin call; default 64
	ChunkSize int // turns scored and recorded together; default 256
	Workers   int // parallel trace parsing and plugin calls; default 2*GOMAXPROCS

	Progress func(done, total int) // called after each chunk
	Logger   hclog.Logger
}

// Engine verifies candidates against one pack.
type Engine struct {
	cfg       Config
	files     fileCache
	tasks     map[string]*taskInfo
	upstreams map[string][]scorer.ID // composite task label -> upstream scorers
}

// taskInfo is a pack task with its wire form computed once.
type taskInfo struct {
	task  *pack.Task
	order int
	wire  scorer.Task
}

// New checks the configuration and prepares the pack's tasks.
func New(cfg Config) (*Engine, error) {
	if cfg.Pack == nil || cfg.Scorers == nil {
		return nil, errors.New("verify: a pack and scorers are required")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 64
	}
	if cfg.ChunkSize <= 0 {
		cfg.ChunkSize = 256
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2 * runtime.GOMAXPROCS(0)
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	e := &Engine{cfg: cfg, tasks: map[string]*taskInfo{}, upstreams: map[string][]scorer.ID{}}
	for i, t := range cfg.Pack.Tasks {
		w, err := wireTask(cfg.Pack, t)
		if err != nil {
			return nil, err
		}
		e.tasks[t.Label] = &taskInfo{task: t, order: i, wire: w}
		if _, ok := cfg.Descriptions[t.Scorer]; !ok {
			return nil, fmt.Errorf("task %q: scorer %q is not installed", t.Label, t.Scorer)
		}
		if t.Scorer == CompositeID {
			ups := Upstreams(cfg.Descriptions, t)
			if len(ups) == 0 {
				return nil, fmt.Errorf("task %q: no installed scorer declares any of its KPI keys", t.Label)
			}
			e.upstreams[t.Label] = ups
		}
	}
	return e, nil
}

// Upstreams lists, sorted, every scorer other than composite that declares
// one of t's KPI keys: the scorers a composite task runs first.
func Upstreams(descs map[scorer.ID]scorer.Description, t *pack.Task) []scorer.ID {
	var ids []scorer.ID
	for id, d := range descs {
		if id == CompositeID {
			continue
		}
		for k := range t.KPIs {
			if d.Declares(k) {
				ids = append(ids, id)
				break
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// wireTask is the task as a scorer sees it.
func wireTask(p *pack.Pack, t *pack.Task) (scorer.Task, error) {
	kpis := make(map[string]json.RawMessage, len(t.KPIs))
	for k, v := range t.KPIs {
		b, err := json.Marshal(v)
		if err != nil {
			return scorer.Task{}, fmt.Errorf("task %q: kpi %s: %w", t.Label, k, err)
		}
		kpis[k] = b
	}
	catalog := append(append([]string(nil), p.ToolCatalog...), t.ToolCatalog...)
	return scorer.Task{
		Label:       t.Label,
		Persona:     t.Persona,
		Prompt:      t.Prompt,
		KPIs:        kpis,
		Safety:      scorer.Safety{RequiresHuman: t.Safety.RequiresHuman, MaxToolCalls: t.Safety.MaxToolCalls},
		ToolCatalog: catalog,
		SliceTags:   t.SliceTags,
	}, nil
}

// only returns the task with its KPIs limited to those id declares.
func (e *Engine) only(w scorer.Task, id scorer.ID) scorer.Task {
	d := e.cfg.Descriptions[id]
	k := make(map[string]json.RawMessage, len(w.KPIs))
	for key, v := range w.KPIs {
		if d.Declares(key) {
			k[key] = v
		}
	}
	w.KPIs = k
	return w
}

// Options are per-candidate choices.
type Options struct {
	Fresh bool // start over as a new attempt instead of resuming
	// Baseline maps task label -> the baseline candidate's turn score, for
	// regressions; nil when there is no baseline.
	Baseline map[string]float64
}

// Outcome is one verified candidate.
type Outcome struct {
	Candidate string
	RunID     int64
	Attempt   int
	Resumed   int          // turns taken from an earlier, interrupted verification
	Results   []TurnResult // in pack task order, missing tasks included
	Summary   score.Summary
	// Diagnostics are the run's input problems: warnings (unknown labels,
	// malformed trace lines) and errors (a turn whose input could not be read;
	// that turn is recorded as unscored).
	Diagnostics diag.List
}

// prepared is a turn read and parsed, ready to score.
type prepared struct {
	spec   *TurnSpec
	info   *taskInfo
	turn   *trace.Turn
	before *companyos.Snapshot
	after  *companyos.Snapshot
	// beforeSHA and afterSHA are the sha256 of the snapshots' bytes, as recorded.
	beforeSHA, afterSHA string
	snaps               []snapshotBlob // raw snapshots to record
	diags               diag.List
	failed              bool // the input could not be read: the turn is unscored

	result *scorer.Result // the task scorer's result
	err    error          // the task scorer broke
	ups    []scorer.Upstream
	upErr  error
}

type snapshotBlob struct {
	sha string
	raw []byte
}

// Verify scores one candidate's turns and returns its outcome. Turns
// already recorded for the same candidate, pack and scorer version are
// resumed, not scored again (unless opts.Fresh).
func (e *Engine) Verify(ctx context.Context, in *Input, opts Options) (*Outcome, error) {
	out := &Outcome{Candidate: in.Candidate}
	var run *store.Run
	done := map[string]TurnResult{}
	if e.cfg.Store != nil {
		var err error
		run, err = e.cfg.Store.BeginRun(ctx, store.RunKey{
			Candidate:     in.Candidate,
			PackSHA256:    e.cfg.Pack.SHA256,
			PackName:      e.cfg.Pack.Name(),
			ScorerVersion: e.cfg.ScorerVersion,
			HostVersion:   e.cfg.HostVersion,
		}, opts.Fresh)
		if err != nil {
			return nil, fmt.Errorf("starting run for %s: %w", in.Candidate, err)
		}
		out.RunID, out.Attempt = run.ID, run.Attempt
		rows, err := e.cfg.Store.TurnsDone(ctx, run.ID, run.Attempt)
		if err != nil {
			return nil, fmt.Errorf("reading recorded turns of %s: %w", in.Candidate, err)
		}
		for label, row := range rows {
			if row.Status == string(score.StatusUnscored) {
				// A turn that could not be scored (its input unreadable,
				// its scorer broken) is tried again on resume.
				if err := e.cfg.Store.DeleteTurn(ctx, run.ID, run.Attempt, label); err != nil {
					return nil, err
				}
				continue
			}
			var r TurnResult
			if err := json.Unmarshal(row.Result, &r); err != nil {
				return nil, fmt.Errorf("reading recorded turn %s of %s: %w", label, in.Candidate, err)
			}
			done[label] = r
		}
	}

	var todo []*TurnSpec
	for i := range in.Turns {
		ts := &in.Turns[i]
		if _, ok := e.tasks[ts.Label]; !ok {
			out.Diagnostics = append(out.Diagnostics, diag.Warnf(ts.Pos, "run.unknown_label",
				"candidate %s: turn %q is not a task of pack %s; ignored", in.Candidate, ts.Label, e.cfg.Pack.Name()))
			continue
		}
		if _, ok := done[ts.Label]; ok {
			out.Resumed++
			continue
		}
		todo = append(todo, ts)
	}

	results := make(map[string]TurnResult, len(e.tasks))
	for l, r := range done {
		results[l] = r
	}
	if err := e.scoreAll(ctx, in.Candidate, todo, run, results, out); err != nil {
		return nil, err
	}

	for _, t := range e.cfg.Pack.Tasks {
		r, ok := results[t.Label]
		if !ok {
			r = TurnResult{Candidate: in.Candidate, Label: t.Label, Persona: t.Persona, Status: score.StatusMissing,
				Checks: []CheckResult{}, FailureTags: []string{}}
		}
		r.weight, r.sliceTags = t.Weight, t.SliceTags
		out.Results = append(out.Results, r)
	}
	turns := make([]score.Turn, len(out.Results))
	for i := range out.Results {
		turns[i] = out.Results[i].scoreTurn()
	}
	out.Summary = score.Summarize(in.Candidate, turns, thresholds(e.cfg.Pack.Scoring))
	out.Summary.ScorerVersion = e.cfg.ScorerVersion
	return out, nil
}

// thresholds are the pack's gates.
func thresholds(s pack.Scoring) score.Thresholds {
	return score.Thresholds{
		MinMeanScore:    s.MinMeanScore,
		MinFinalizeRate: s.MinFinalizeRate,
		MaxErrorRate:    s.MaxErrorRate,
		MaxMeanLatencyS: s.MaxMeanLatencyS,
		MaxMeanCostUSD:  s.MaxMeanCostUSD,
	}
}

// scoreAll scores todo in chunks, in three overlapping stages: while one
// chunk is scored on the plugins, the next one's traces are parsed and the
// previous one is finished (CEL checks, scores) and recorded, each chunk as
// soon as it is scored.
func (e *Engine) scoreAll(ctx context.Context, candidate string, todo []*TurnSpec, run *store.Run,
	results map[string]TurnResult, out *Outcome) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	ready := make(chan []*prepared, 1)
	go func() {
		defer close(ready)
		for start := 0; start < len(todo); start += e.cfg.ChunkSize {
			c := e.prepareChunk(ctx, todo[start:min(start+e.cfg.ChunkSize, len(todo))])
			select {
			case ready <- c:
			case <-ctx.Done():
				return
			}
		}
	}()

	scored := make(chan []*prepared, 1)
	recorded := make(chan error, 1)
	go func() {
		recorded <- e.recordChunks(ctx, cancel, candidate, len(todo), scored, run, results, out)
	}()

	for chunk := range ready {
		if ctx.Err() != nil {
			break
		}
		e.scoreChunk(ctx, chunk)
		if ctx.Err() != nil {
			// Interrupted while scoring: the chunk's outcomes are the
			// interruption, not the scorers' verdict. Record nothing of it;
			// a rerun resumes here.
			break
		}
		select {
		case scored <- chunk:
		case <-ctx.Done():
		}
	}
	close(scored)
	if err := <-recorded; err != nil {
		return err
	}
	return ctx.Err()
}

// recordChunks finishes each scored chunk's turns and records them; an error
// stops the run (the turns recorded so far stay, and a rerun resumes).
func (e *Engine) recordChunks(ctx context.Context, cancel context.CancelFunc, candidate string, total int,
	scored <-chan []*prepared, run *store.Run, results map[string]TurnResult, out *Outcome) error {
	stored := map[string]bool{}
	n := 0
	var failed error
	for chunk := range scored {
		if failed != nil || ctx.Err() != nil {
			continue // drain, so the scoring stage never blocks; an interrupted run records no more
		}
		if err := e.recordChunk(ctx, candidate, chunk, run, stored, results, out); err != nil {
			failed = err
			cancel() // stop scoring what can no longer be recorded
			continue
		}
		n += len(chunk)
		if e.cfg.Progress != nil {
			e.cfg.Progress(n, total)
		}
	}
	return failed
}

func (e *Engine) recordChunk(ctx context.Context, candidate string, chunk []*prepared, run *store.Run,
	stored map[string]bool, results map[string]TurnResult, out *Outcome) error {
	rows := make([]store.TurnRow, 0, len(chunk))
	var snaps []snapshotBlob
	for _, p := range chunk {
		r := e.finish(ctx, candidate, p)
		out.Diagnostics = append(out.Diagnostics, p.diags...)
		results[p.spec.Label] = r
		if run == nil {
			continue
		}
		for _, s := range p.snaps {
			if !stored[s.sha] {
				stored[s.sha] = true
				snaps = append(snaps, s)
			}
		}
		row, err := turnRow(run, &r)
		if err != nil {
			return err
		}
		rows = append(rows, row)
	}
	if run == nil {
		return nil
	}
	for _, s := range snaps {
		if err := e.cfg.Store.PutSnapshot(ctx, s.sha, s.raw); err != nil {
			return fmt.Errorf("recording state snapshot: %w", err)
		}
	}
	if err := e.cfg.Store.InsertTurns(ctx, rows); err != nil {
		return fmt.Errorf("recording turns of %s: %w", candidate, err)
	}
	return nil
}

// turnRow is the database row of a turn result.
func turnRow(run *store.Run, r *TurnResult) (store.TurnRow, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return store.TurnRow{}, fmt.Errorf("encoding turn %s: %w", r.Label, err)
	}
	checks, _ := json.Marshal(r.Checks)
	tags, _ := json.Marshal(r.FailureTags)
	return store.TurnRow{
		RunID:             run.ID,
		Label:             r.Label,
		Attempt:           run.Attempt,
		Status:            string(r.Status),
		ProcessScore:      r.ProcessScore,
		KPIScore:          r.KPIScore,
		TurnScore:         r.TurnScore,
		Checks:            checks,
		FailureTags:       tags,
		ScorerID:          r.Scorer.ID,
		ScorerSHA256:      r.Scorer.SHA256,
		StateBeforeSHA256: r.StateBefore,
		StateAfterSHA256:  r.StateAfter,
		Result:            b,
	}, nil
}

// prepareChunk reads and parses a chunk's traces and snapshots in parallel.
func (e *Engine) prepareChunk(ctx context.Context, specs []*TurnSpec) []*prepared {
	out := make([]*prepared, len(specs))
	cache := &snapshotCache{m: map[string]*companyos.Snapshot{}}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(e.cfg.Workers, len(specs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = e.prepare(specs[i], cache)
			}
		}()
	}
	for i := range specs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	for i, p := range out {
		if p == nil { // cancelled before it was prepared: scoreAll stops before scoring it
			out[i] = &prepared{spec: specs[i], info: e.tasks[specs[i].Label], turn: &trace.Turn{}, failed: true}
		}
	}
	return out
}

// snapshotCache shares one parsed snapshot among the turns of a chunk that
// use the same bytes, so a scorer indexes it once.
type snapshotCache struct {
	mu sync.Mutex
	m  map[string]*companyos.Snapshot
}

// prepare reads one turn's trace and snapshots. Problems are recorded on the
// turn; they never stop the run.
func (e *Engine) prepare(ts *TurnSpec, cache *snapshotCache) *prepared {
	p := &prepared{spec: ts, info: e.tasks[ts.Label]}
	var traceSrc, beforeSrc, afterSrc []byte
	var err error
	if ts.line != nil {
		traceSrc, beforeSrc, afterSrc, err = ts.line.load()
		if err != nil {
			return p.fail(ts.Pos, "turns.read", err)
		}
	}
	var turn *trace.Turn
	var ds diag.List
	if ts.TracePath != "" {
		turn, ds, err = trace.ParseFile(ts.TracePath)
	} else {
		turn, ds, err = trace.Parse(ts.Pos.String(), bytes.NewReader(traceSrc))
	}
	if err != nil {
		return p.fail(ts.Pos, "trace.read", err)
	}
	p.turn = turn
	p.diags = append(p.diags, ds...)
	p.before, p.beforeSHA = e.snapshot(p, ts.StateBefore, beforeSrc, cache)
	p.after, p.afterSHA = e.snapshot(p, ts.StateAfter, afterSrc, cache)
	return p
}

func (p *prepared) fail(pos diag.Pos, code string, err error) *prepared {
	p.failed = true
	if p.turn == nil {
		p.turn = &trace.Turn{}
	}
	p.diags = append(p.diags, diag.Errorf(pos, code, "%v", err))
	return p
}

// snapshot reads one state part and returns it with the sha256 of its bytes;
// nil when absent or unreadable (the problem is recorded on the turn).
func (e *Engine) snapshot(p *prepared, part Part, inline []byte, cache *snapshotCache) (*companyos.Snapshot, string) {
	if part.Empty() {
		return nil, ""
	}
	src := inline
	name := part.Pos.String()
	if part.Path != "" {
		// A snapshot file shared by many turns (one capture for a whole
		// run) is read, hashed and parsed once.
		if s, sha, ok := e.files.get(part.Path); ok {
			return s, sha
		}
		var err error
		src, err = os.ReadFile(part.Path)
		if err != nil {
			p.fail(part.Pos, "state.read", fmt.Errorf("reading state snapshot: %w", err))
			return nil, ""
		}
		name = part.Path
	}
	sum := sha256.Sum256(src)
	sha := hex.EncodeToString(sum[:])
	cache.mu.Lock()
	s, ok := cache.m[sha]
	cache.mu.Unlock()
	if !ok {
		var ds diag.List
		s, ds = state.Parse(name, src)
		p.diags = append(p.diags, ds...)
		if ds.HasErrors() || s == nil {
			p.failed = true
			return nil, ""
		}
		cache.mu.Lock()
		if prev, ok := cache.m[sha]; ok {
			s = prev
		} else {
			cache.m[sha] = s
		}
		cache.mu.Unlock()
	}
	p.snaps = append(p.snaps, snapshotBlob{sha: sha, raw: src})
	if part.Path != "" {
		e.files.put(part.Path, s, sha)
	}
	return s, sha
}

// fileCache remembers the last snapshot files read, by path, size and
// modification time, so a file many turns share is parsed once. It is
// bounded: a run whose every turn has its own files gains nothing and holds
// at most maxCachedFiles snapshots.
type fileCache struct {
	mu sync.Mutex
	m  map[string]cachedFile
}

type cachedFile struct {
	size    int64
	modTime time.Time
	snap    *companyos.Snapshot
	sha     string
}

const maxCachedFiles = 64

func (c *fileCache) get(path string) (*companyos.Snapshot, string, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.m[path]
	if !ok || f.size != st.Size() || !f.modTime.Equal(st.ModTime()) {
		return nil, "", false
	}
	return f.snap, f.sha, true
}

func (c *fileCache) put(path string, s *companyos.Snapshot, sha string) {
	st, err := os.Stat(path)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedFiles {
		c.m = map[string]cachedFile{}
	}
	c.m[path] = cachedFile{size: st.Size(), modTime: st.ModTime(), snap: s, sha: sha}
}

// job is one case of a turn for one scorer.
type job struct {
	p        *prepared
	upstream int // index into the composite's upstream list, or -1 for the task scorer
	c        *scorer.Case
}

// scoreChunk scores every turn of a chunk: first each turn's task scorer
// (for composite tasks: the upstream scorers), then composite.
func (e *Engine) scoreChunk(ctx context.Context, chunk []*prepared) {
	byScorer := map[scorer.ID][]job{}
	for i, p := range chunk {
		if p.failed {
			continue
		}
		t := p.info.task
		if t.Scorer == CompositeID {
			ups := e.upstreams[t.Label]
			p.ups = make([]scorer.Upstream, len(ups))
			for k, id := range ups {
				byScorer[id] = append(byScorer[id], job{p: p, upstream: k, c: e.newCase(i, p, id)})
			}
			continue
		}
		byScorer[t.Scorer] = append(byScorer[t.Scorer], job{p: p, upstream: -1, c: e.newCase(i, p, t.Scorer)})
	}
	e.runJobs(ctx, byScorer)

	var composite []job
	for i, p := range chunk {
		if p.failed || p.info.task.Scorer != CompositeID || p.upErr != nil {
			continue
		}
		c := e.newCase(i, p, CompositeID)
		c.Upstream = p.ups
		composite = append(composite, job{p: p, upstream: -1, c: c})
	}
	if len(composite) > 0 {
		e.runJobs(ctx, map[scorer.ID][]job{CompositeID: composite})
	}
}

func (e *Engine) newCase(i int, p *prepared, id scorer.ID) *scorer.Case {
	return &scorer.Case{
		ID:          fmt.Sprintf("%d", i),
		Task:        e.only(p.info.wire, id),
		Turn:        *p.turn,
		StartedAt:   p.spec.StartedAt,
		FinishedAt:  p.spec.FinishedAt,
		StateBefore: p.before,
		StateAfter:  p.after,
	}
}

// runJobs sends the jobs in batches on a bounded pool and records each outcome.
func (e *Engine) runJobs(ctx context.Context, byScorer map[scorer.ID][]job) {
	type batch struct {
		id   scorer.ID
		jobs []job
	}
	var batches []batch
	ids := make([]scorer.ID, 0, len(byScorer))
	for id := range byScorer {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		js := byScorer[id]
		for s := 0; s < len(js); s += e.cfg.BatchSize {
			batches = append(batches, batch{id: id, jobs: js[s:min(s+e.cfg.BatchSize, len(js))]})
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, e.cfg.Workers)
	for _, b := range batches {
		wg.Add(1)
		sem <- struct{}{}
		go func(b batch) {
			defer wg.Done()
			defer func() { <-sem }()
			cases := make([]*scorer.Case, len(b.jobs))
			for i, j := range b.jobs {
				cases[i] = j.c
			}
			outs := e.cfg.Scorers.Score(ctx, b.id, cases)
			mu.Lock()
			defer mu.Unlock()
			for i, j := range b.jobs {
				var o batchrun.Outcome
				if i < len(outs) {
					o = outs[i]
				} else {
					o.Err = fmt.Errorf("scorer %s returned %d results for %d cases", b.id, len(outs), len(cases))
				}
				if o.Err == nil && o.Result == nil {
					o.Err = fmt.Errorf("scorer %s returned no result", b.id)
				}
				if j.upstream >= 0 {
					if o.Err != nil {
						j.p.upErr = fmt.Errorf("upstream scorer %s: %w", b.id, o.Err)
						continue
					}
					j.p.ups[j.upstream] = scorer.Upstream{Scorer: b.id, Result: *o.Result}
					continue
				}
				j.p.result, j.p.err = o.Result, o.Err
			}
		}(b)
	}
	wg.Wait()
}

// finish turns a scored (or failed) turn into its result.
func (e *Engine) finish(ctx context.Context, candidate string, p *prepared) TurnResult {
	t := p.info.task
	turn := p.turn
	sc := e.cfg.Pack.Scoring
	r := TurnResult{
		Candidate:   candidate,
		Label:       t.Label,
		Persona:     firstNonEmpty(p.spec.Persona, t.Persona),
		Finalized:   turn.Finalized,
		Error:       turn.Error,
		LatencyS:    p.spec.LatencyS,
		CostUSD:     p.spec.CostUSD,
		ToolCalls:   len(turn.ToolCalls),
		Checks:      []CheckResult{},
		FailureTags: []string{},
		Scorer:      e.cfg.Identities[t.Scorer],
	}
	r.StateBefore, r.StateAfter = p.beforeSHA, p.afterSHA
	for _, d := range p.diags {
		r.Diagnostics = append(r.Diagnostics, bound(d.String()))
	}
	process := trace.ProcessScore(turn)
	r.ProcessScore = &process
	hostTags := score.HostFailureTags(score.TagInput{
		Turn:            turn,
		MaxToolCalls:    t.Safety.MaxToolCalls,
		RequiresHuman:   t.Safety.RequiresHuman,
		LatencyS:        p.spec.LatencyS,
		CostUSD:         p.spec.CostUSD,
		MaxMeanLatencyS: sc.MaxMeanLatencyS,
		MaxMeanCostUSD:  sc.MaxMeanCostUSD,
	})

	err := p.err
	if err == nil && p.upErr != nil {
		err = p.upErr
	}
	if p.failed {
		// The turn's input could not be read: nothing about it is known
		// beyond why (its diagnostics).
		r.Status, r.ProcessScore = score.StatusUnscored, nil
		return r
	}
	if err != nil {
		r.Status = score.StatusUnscored
		r.Diagnostics = append(r.Diagnostics, bound(fmt.Sprintf("scorer %s could not score the turn: %v", t.Scorer, err)))
		r.FailureTags = score.MergeTags(hostTags, []string{score.TagScorerError})
		return r
	}

	res := p.result
	var checks []CheckResult
	if t.Scorer == CompositeID {
		for _, u := range p.ups {
			checks = append(checks, scorerChecks(u.Scorer, u.Result.Checks)...)
			for _, d := range u.Result.Diagnostics {
				r.Diagnostics = append(r.Diagnostics, bound(fmt.Sprintf("%s: %s", u.Scorer, d)))
			}
		}
	} else {
		checks = scorerChecks(t.Scorer, res.Checks)
	}
	for _, d := range res.Diagnostics {
		r.Diagnostics = append(r.Diagnostics, bound(fmt.Sprintf("%s: %s", t.Scorer, d)))
	}
	checkScores := make(map[string]float64, len(checks))
	for _, c := range checks {
		checkScores[c.Name] = c.Score
	}
	var celWeighted []score.Weighted
	var celTags []string
	if e.cfg.CEL != nil && len(t.CEL) > 0 {
		for _, c := range e.cfg.CEL.Evaluate(ctx, t, kpi.Input{
			Turn:         turn,
			Label:        t.Label,
			Persona:      r.Persona,
			LatencyS:     p.spec.LatencyS,
			CostUSD:      p.spec.CostUSD,
			State:        p.after,
			Before:       p.before,
			ScorerScore:  res.Score,
			ScorerChecks: checkScores,
		}) {
			cr := CheckResult{Name: c.Name, Source: "cel", Score: c.Score, Passed: c.Passed, Detail: bound(c.Detail)}
			if !c.Passed && c.FailureTag != "" {
				cr.FailureTag = c.FailureTag
				celTags = append(celTags, c.FailureTag)
			}
			checks = append(checks, cr)
			celWeighted = append(celWeighted, score.Weighted{Score: c.Score, Weight: c.Weight})
		}
	}
	nChecks := len(res.Checks)
	if t.Scorer == CompositeID {
		nChecks = 0
		for _, u := range p.ups {
			nChecks += len(u.Result.Checks)
		}
	}
	kpiScore := score.KPIScore(res.Score, nChecks, celWeighted)
	turnScore := score.TurnScore(sc.ProcessWeight, sc.KPIWeight, process, kpiScore)
	r.Status = score.StatusScored
	r.KPIScore, r.TurnScore = &kpiScore, &turnScore
	r.Checks = checks
	tags := append([]string(nil), res.FailureTags...)
	for _, u := range p.ups {
		tags = append(tags, u.Result.FailureTags...)
	}
	r.FailureTags = score.MergeTags(tags, celTags, hostTags)
	return r
}

// scorerChecks converts a scorer's checks, bounding every stored excerpt.
func scorerChecks(id scorer.ID, cs []scorer.Check) []CheckResult {
	out := make([]CheckResult, len(cs))
	for i, c := range cs {
		out[i] = CheckResult{Name: c.KPI, Source: "scorer:" + string(id), Score: c.Score, Passed: c.Passed,
			Detail: bound(c.Detail)}
		if !c.Passed {
			out[i].FailureTag = c.FailureTag // a tag names a failure: a passed check carries none
		}
		for _, ev := range c.Evidence {
			out[i].Evidence = append(out[i].Evidence, bound(ev))
		}
	}
	return out
}

// bound keeps a stored excerpt within the evidence limit (500 characters,
// with the truncation marker), as every stored excerpt is.
func bound(s string) string {
	b, _ := excerpt.Bound(s)
	return b
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}
