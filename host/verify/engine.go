package verify

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/assay-eval/assay/host/kpi"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/state"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/excerpt"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/pkg/trace"
	"github.com/assay-eval/assay/sdk/batchrun"
)

// Scorers scores batches of cases; *pluginhost.Host is one.
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
	ChunkSize int // turns recorded together, in one transaction; default 256 (a pass may score them in halves: chunkPartsFor)
	Workers   int // parallel trace parsing and plugin calls; default 2*GOMAXPROCS

	Progress func(done, total int) // called after each chunk
	Logger   hclog.Logger

	tasks *taskIndex // the pack's tasks by label when Run made them before New; nil: New makes them
}

// Engine verifies candidates against one pack.
type Engine struct {
	cfg       Config
	files     fileCache
	tasks     map[string]*taskInfo
	upstreams map[string][]scorer.ID // label of a task whose scorer needs upstream results -> its upstream scorers
	gzips     gzipPool               // the writers evidence is compressed with
	blobSnaps blobSnapshots          // snapshots parsed from stored evidence
	chunkRead func(turns int)        // tests: called when a pass has read a part of a chunk, with its turns
	collect   func()                 // runtime.GC; tests: count the collections after a long pass
	parts     int                    // the parts a pass reads a chunk in: chunkPartsFor
}

// taskInfo is a pack task with what its wire form does not share with the
// pack task computed once: its encoded KPIs and its tool catalog (shared
// among tasks, see wireShare). The wire form itself is made when a case
// needs it, so the engine does not hold a second copy of each task's
// fields (docs/performance.md, "Verifying many small turns").
type taskInfo struct {
	task    *pack.Task
	kpis    map[string]json.RawMessage
	catalog *[]string         // shared by the tasks without a tool_catalog of their own
	order   int32             // the task's position in the pack
	key     [sha256.Size]byte // sha256 of the task's definition, part of each turn's input key
}

// taskIndex is a pack's tasks by label, each with what the engine keeps of
// it (filled in by New). Run makes it before the engine is built and asks
// it which labels are tasks and what their scorers are, so that a run
// keeps one map by label rather than one of its own beside the engine's.
type taskIndex struct {
	pack    *pack.Pack
	byLabel map[string]*taskInfo
	infos   []taskInfo // one allocation, not one a task
}

func newTaskIndex(p *pack.Pack) *taskIndex {
	ix := &taskIndex{pack: p, byLabel: make(map[string]*taskInfo, len(p.Tasks)), infos: make([]taskInfo, len(p.Tasks))}
	for i, t := range p.Tasks {
		ix.infos[i] = taskInfo{task: t, order: int32(i)}
		ix.byLabel[t.Label] = &ix.infos[i]
	}
	return ix
}

// wire is the task as its scorer sees it: what wireShare.task gave.
func (info *taskInfo) wire() scorer.Task { return wireTask(info.task, info.kpis, *info.catalog) }

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
	ix := cfg.tasks
	if ix == nil || ix.pack != cfg.Pack || len(ix.infos) != len(cfg.Pack.Tasks) {
		ix = newTaskIndex(cfg.Pack)
	}
	cfg.tasks = nil
	e := &Engine{cfg: cfg, tasks: ix.byLabel, upstreams: map[string][]scorer.ID{}, gzips: newGzipPool(cfg.Workers)}
	shared := newWireShare(cfg.Pack)
	called := map[scorer.ID]bool{} // the scorers the pack's turns are scored by, upstream ones included
	for i, t := range cfg.Pack.Tasks {
		called[t.Scorer] = true
		kpis, catalog, err := shared.parts(t)
		if err != nil {
			return nil, err
		}
		ix.infos[i].kpis, ix.infos[i].catalog = kpis, catalog
		if _, ok := cfg.Descriptions[t.Scorer]; !ok {
			return nil, fmt.Errorf("task %q: scorer %q is not installed", t.Label, t.Scorer)
		}
		if cfg.Descriptions[t.Scorer].NeedsPart(scorer.NeedUpstream) {
			ups := Upstreams(cfg.Descriptions, t)
			if len(ups) == 0 {
				return nil, fmt.Errorf("task %q: no installed scorer declares any of its KPI keys", t.Label)
			}
			e.upstreams[t.Label] = ups
			for _, id := range ups {
				called[id] = true
			}
		}
	}
	e.parts = chunkPartsFor(cfg.ChunkSize, cfg.BatchSize, len(called))
	keyer := &taskKeyer{}
	for _, t := range cfg.Pack.Tasks {
		info := e.tasks[t.Label]
		var err error
		if info.key, err = e.taskKey(keyer, info.task, info.wire()); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Upstreams is the one rule for upstream scorers (docs/verify-engine.md):
// when t's scorer declares the upstream need, it lists, sorted, every
// installed scorer that does not itself need upstream results and declares
// one of t's KPI keys; these score the turn first and their results are
// delivered to t's scorer. For any other task it is nil.
func Upstreams(descs map[scorer.ID]scorer.Description, t *pack.Task) []scorer.ID {
	if !descs[t.Scorer].NeedsPart(scorer.NeedUpstream) {
		return nil
	}
	var ids []scorer.ID
	for id, d := range descs {
		if d.NeedsPart(scorer.NeedUpstream) {
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

// wireShare builds the tasks' wire forms (each task as a scorer sees it),
// sharing what equal tasks share: the pack gives tasks with equal KPIs one
// map, so their encoded KPIs are one map too, and the tasks without a tool
// catalog of their own share the pack's. Wire forms are read-only (scorers
// get them as sdk.Case says), so a 10,000-task pack keeps one encoded KPI
// map per distinct one, not one per task (docs/performance.md, "Verifying
// many small turns").
type wireShare struct {
	p       *pack.Pack
	kpis    map[uintptr]map[string]json.RawMessage
	catalog []string // the pack's catalog alone; nil when it is empty
}

func newWireShare(p *pack.Pack) *wireShare {
	c := append([]string(nil), p.ToolCatalog...)
	return &wireShare{p: p, kpis: map[uintptr]map[string]json.RawMessage{}, catalog: c[:len(c):len(c)]}
}

// parts is what t's wire form does not share with t: its encoded KPIs and
// its tool catalog, each shared with the tasks that have the same.
func (s *wireShare) parts(t *pack.Task) (map[string]json.RawMessage, *[]string, error) {
	var key uintptr // the pack's map, alive as long as the pack; 0 for no KPIs
	if len(t.KPIs) > 0 {
		key = reflect.ValueOf(t.KPIs).Pointer()
	}
	kpis, ok := s.kpis[key]
	if !ok {
		kpis = make(map[string]json.RawMessage, len(t.KPIs))
		for k, v := range t.KPIs {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, nil, fmt.Errorf("task %q: kpi %s: %w", t.Label, k, err)
			}
			kpis[k] = b
		}
		s.kpis[key] = kpis
	}
	if len(t.ToolCatalog) > 0 {
		catalog := append(append([]string(nil), s.p.ToolCatalog...), t.ToolCatalog...)
		return kpis, &catalog, nil
	}
	return kpis, &s.catalog, nil
}

// wireTask is t as a scorer sees it, with its encoded KPIs and merged
// tool catalog.
func wireTask(t *pack.Task, kpis map[string]json.RawMessage, catalog []string) scorer.Task {
	return scorer.Task{
		Label:       t.Label,
		Persona:     t.Persona,
		Prompt:      t.Prompt,
		KPIs:        kpis,
		Safety:      scorer.Safety{RequiresHuman: t.Safety.RequiresHuman, MaxToolCalls: t.Safety.MaxToolCalls},
		ToolCatalog: catalog,
		SliceTags:   t.SliceTags,
	}
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
	// Seed seeds the bootstrap intervals (docs/scoring.md); nil means
	// score.DefaultSeed.
	Seed *uint64
	// Baseline maps task label -> the baseline candidate's turn score, for
	// regressions; nil when there is no baseline.
	Baseline map[string]float64
}

// Outcome is one verified candidate.
type Outcome struct {
	Candidate string
	RunID     int64
	Attempt   int
	// Reused counts the turns taken from an earlier verification of the
	// same run attempt because their inputs are byte-identical (the same
	// input key, docs/verify-engine.md).
	Reused int
	// Rescored lists, sorted, the turns recorded before whose inputs changed
	// and that were scored again, as a new revision of the turn.
	Rescored []string
	// Retried lists, sorted, the turns recorded before as unscored that
	// were scored again.
	Retried []string
	// ScoredOnRetry lists, sorted, the turns scored in this pass whose
	// result (or an upstream scorer's) came from a retry: their batch lost
	// the plugin process, or the scorer failed them once. Each also says so
	// in its diagnostics ("host: retried: ...").
	ScoredOnRetry []string
	// Ignored lists, sorted, the input's turns whose label is not a task of
	// the pack: they are neither scored nor recorded, and say so
	// (CandidateReport.Ignored, the verdict's reasons).
	Ignored []string
	Results []TurnResult // in pack task order, missing tasks included
	Summary score.Summary
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
	traceSHA            string         // sha256 of the trace's bytes
	traceBlob           *store.Blob    // the compressed trace to record; nil when stored already or not recorded
	metrics             []byte         // the metrics row to record
	diags               diag.List
	failed              bool // the input could not be read: the turn is unscored

	key    string         // the input key; empty when the input could not be read
	prior  *store.TurnRow // the turn's latest recorded revision, if any
	reused *TurnResult    // the prior result, when its input key is the same

	result *scorer.Result // the task scorer's result
	err    error          // the task scorer broke
	ups    []scorer.Upstream
	upErr  error
	// retried: a scorer's result for the turn came from a retry after its
	// batch lost the plugin process (batchrun.Outcome.ScoredOnRetry).
	retried bool
}

type snapshotBlob struct {
	sha string
	raw []byte
}

// pass is one candidate's verification in progress.
type pass struct {
	candidate string
	run       *store.Run                      // nil when nothing is recorded
	prior     map[store.TurnKey]store.TurnRow // latest recorded revision of each turn
	results   passResults
	stored    blobSet // blobs recorded by this pass
	out       *Outcome
}

// Verify scores one candidate's turns and returns its outcome. A turn
// already recorded for the same candidate, pack, scorer version and run
// attempt is reused when its input key is the same; otherwise it is scored
// again as the turn's next revision (docs/verify-engine.md). opts.Fresh
// starts a new attempt instead.
func (e *Engine) Verify(ctx context.Context, in *Input, opts Options) (*Outcome, error) {
	v := e.newPass(in.Candidate)
	if e.cfg.Store != nil {
		var err error
		if v, err = e.begin(ctx, in, opts.Fresh); err != nil {
			return nil, err
		}
	}
	out := v.out

	stream, err := e.turnsOf(in) // a turns file's candidate: decoded a chunk at a time, for this pass only
	if err != nil {
		return nil, err
	}
	defer stream.close()
	if err := e.scoreAll(ctx, v, stream); err != nil {
		return nil, err
	}
	out.Diagnostics = append(stream.unknown, out.Diagnostics...)
	out.Ignored = stream.ignored
	sort.Strings(out.Ignored)
	sort.Strings(out.Rescored)
	sort.Strings(out.Retried)
	sort.Strings(out.ScoredOnRetry)

	if stream.total >= collectAfterTurns {
		e.collectGarbage()
	}
	out.Results = v.inTaskOrder(e.cfg.Pack.Tasks)
	turns := make([]score.Turn, len(out.Results))
	for i := range out.Results {
		turns[i] = out.Results[i].scoreTurn()
	}
	th := thresholds(e.cfg.Pack.Scoring)
	if opts.Seed != nil {
		th.Seed = *opts.Seed
	}
	out.Summary = score.Summarize(in.Candidate, turns, th)
	out.Summary.ScorerVersion = e.cfg.ScorerVersion
	return out, nil
}

// collectAfterTurns is the length of a pass (turns of the pack's tasks)
// from which it ends with a collection, before its results are put in task
// order and summarized. What its turns in flight held is garbage then, and
// the end's large allocations (the results, the summary's turns and tasks:
// about 6 MB at 10,000 turns) otherwise land in a heap whose free pages
// are scattered between the pass's live spans, so the heap grows by about
// their size and sets the run's peak. A pass this long has had about ten
// collections of its own, so one more is a small share of its collector's
// work; the shorter passes of a run of many candidates (1,000 turns in
// BenchmarkVerifyFlat100k) are left alone (docs/performance.md, "Verifying
// many small turns").
const collectAfterTurns = 4096

// collectGarbage runs a collection and waits for it.
func (e *Engine) collectGarbage() {
	if e.collect != nil {
		e.collect()
		return
	}
	runtime.GC()
}

// passResults are a pass's turn results until it is summarized, each kept
// as a keptResult: epoch 1 of each task in a slice in pack task order,
// allocated at the first result, the other epochs by key. No map of
// results is held, and what results repeat is held once (repeats;
// docs/performance.md, "Verifying many small turns").
type passResults struct {
	tasks int          // the pack's tasks: the length of first
	first []keptResult // by taskInfo.order; has says which are set
	has   []bool
	more  map[store.TurnKey]keptResult
	n     int
	seen  repeats
}

func (rs *passResults) put(info *taskInfo, k store.TurnKey, r TurnResult) {
	rs.seen.share(&r)
	kr := rs.seen.keep(&r)
	if k.Epoch != 1 {
		if rs.more == nil {
			rs.more = map[store.TurnKey]keptResult{}
		}
		if _, ok := rs.more[k]; !ok {
			rs.n++
		}
		rs.more[k] = kr
		return
	}
	if rs.first == nil {
		rs.first, rs.has = make([]keptResult, rs.tasks), make([]bool, rs.tasks)
	}
	if !rs.has[info.order] {
		rs.n++
	}
	rs.first[info.order], rs.has[info.order] = kr, true
}

// inTaskOrder is the pass's results in pack task order, each task's epochs
// ascending, a missing result for a task without any. It drops v.results.
func (v *pass) inTaskOrder(tasks []*pack.Task) []TurnResult {
	rs := v.results
	v.results = passResults{}
	has := func(i int) bool { return rs.has != nil && rs.has[i] }
	ofTask := func(r TurnResult, t *pack.Task) TurnResult {
		r.weight, r.sliceTags = t.Weight, t.SliceTags
		return r
	}
	// first is task i's epoch-1 result, or its missing result.
	first := func(i int, t *pack.Task) TurnResult {
		if has(i) {
			return ofTask(rs.first[i].result(t.Label), t)
		}
		return ofTask(TurnResult{Candidate: v.candidate, Label: t.Label, Epoch: 1, Persona: t.Persona,
			Status: score.StatusMissing, Checks: []CheckResult{}, FailureTags: []string{}}, t)
	}
	if len(rs.more) == 0 && rs.first != nil {
		results := make([]TurnResult, len(tasks))
		for i, t := range tasks {
			results[i] = first(i, t)
		}
		return results
	}
	epochs := make(map[string][]int, len(rs.more)) // task label -> its epochs above 1 that ran, ascending
	for k := range rs.more {
		epochs[k.Label] = append(epochs[k.Label], k.Epoch)
	}
	n := rs.n
	for i, t := range tasks {
		if !has(i) && len(epochs[t.Label]) == 0 {
			n++
		}
	}
	results := make([]TurnResult, 0, n)
	for i, t := range tasks {
		es := epochs[t.Label]
		sort.Ints(es)
		if has(i) || len(es) == 0 {
			results = append(results, first(i, t))
		}
		for _, ep := range es {
			results = append(results, ofTask(rs.more[store.TurnKey{Label: t.Label, Epoch: ep}].result(t.Label), t))
		}
	}
	return results
}

// turnStream is a candidate's turns of the pack's tasks, a chunk at a
// time: for a candidate of an indexed turns file, its lines decoded as the
// chunks are taken, so no more than the chunks in flight are held
// (docs/performance.md); otherwise the turns given. A turn of another label
// is ignored with a warning (unknown, in the order read).
type turnStream struct {
	e       *Engine
	in      *Input
	total   int         // turns of the pack's tasks
	todo    []*TurnSpec // the turns left, when given
	r       *specReader // the turns file, when indexed
	taken   int
	unknown diag.List
	ignored []string // the turns not of a task of the pack, by turnName
}

func (e *Engine) turnsOf(in *Input) (*turnStream, error) {
	s := &turnStream{e: e, in: in}
	if in.src != nil && in.src.tasks >= 0 {
		r, err := in.src.reader(in.Candidate, true)
		if err != nil {
			return nil, err
		}
		r.hold = true // the chunk's lines, until its turns are prepared
		s.r, s.total = r, in.src.tasks
		return s, nil
	}
	specs, err := in.specs()
	if err != nil {
		return nil, err
	}
	for i := range specs {
		if s.known(&specs[i]) {
			s.todo = append(s.todo, &specs[i])
		}
	}
	s.total = len(s.todo)
	return s, nil
}

// known reports whether the turn is of a task of the pack, and warns when not.
func (s *turnStream) known(ts *TurnSpec) bool {
	if _, ok := s.e.tasks[ts.Label]; ok {
		return true
	}
	s.ignored = append(s.ignored, turnName(ts.key()))
	s.unknown = append(s.unknown, diag.Warnf(ts.Pos, "run.unknown_label",
		"candidate %s: turn %q is not a task of pack %s; ignored%s", s.in.Candidate, ts.Label, s.e.cfg.Pack.Name(), s.e.didYouMean(ts.Label)))
	return false
}

// next is the next up to n turns; none when all were taken.
func (s *turnStream) next(n int) ([]*TurnSpec, error) {
	if s.r == nil {
		c := s.todo[:min(n, len(s.todo))]
		s.todo = s.todo[len(c):]
		return c, nil
	}
	var out []*TurnSpec
	for len(out) < n {
		specs, err := s.r.next(n - len(out))
		if err != nil {
			return nil, err
		}
		if len(specs) == 0 {
			break
		}
		for i := range specs {
			if s.known(&specs[i]) {
				out = append(out, &specs[i])
			}
		}
	}
	s.taken += len(out)
	if s.taken > s.total || len(out) == 0 && s.taken < s.total {
		return nil, fmt.Errorf("reading turns file %s: %w (candidate %s has %d turns of the pack's tasks, not %d)",
			s.r.src.file.path, errTurnsChanged, s.in.Candidate, s.taken, s.total)
	}
	return out, nil
}

func (s *turnStream) close() {
	if s.r != nil {
		s.r.close()
	}
}

// key is the turn a spec is: its label and epoch (an unset epoch is 1).
func (ts *TurnSpec) key() store.TurnKey {
	return store.TurnKey{Label: ts.Label, Epoch: max(ts.Epoch, 1)}
}

// turnName names a turn in lists of labels: the label for epoch 1, else
// label.epoch (the run directory's trace name).
func turnName(k store.TurnKey) string {
	if k.Epoch <= 1 {
		return k.Label
	}
	return fmt.Sprintf("%s.%d", k.Label, k.Epoch)
}

// thresholds are the pack's gates.
func thresholds(s pack.Scoring) score.Thresholds {
	return score.Thresholds{
		MinMeanScore:    s.MinMeanScore,
		MinFinalizeRate: s.MinFinalizeRate,
		MaxErrorRate:    s.MaxErrorRate,
		MaxMeanLatencyS: s.MaxMeanLatencyS,
		MaxMeanCostUSD:  s.MaxMeanCostUSD,
		PassThreshold:   s.PassThreshold,
		MinPassHatK:     passHatGate(s.MinPassHatK),
		Seed:            score.DefaultSeed,
	}
}

func passHatGate(g *pack.PassHatK) *score.PassHatGate {
	if g == nil {
		return nil
	}
	return &score.PassHatGate{K: g.K, Value: g.Value}
}

// chunksInFlight bounds the parts of chunks a pass holds between reading
// their turns and finishing them: one read and prepared, two scored at
// once and one scored and waiting to be finished, while the write of the
// chunk before is in flight. The writes are the slowest stage, so more
// parts only wait longer in front of them, each holding its turns, parsed
// traces and results (docs/performance.md, "Verifying many small turns").
const chunksInFlight = 4

// chunkParts is how many parts a pass reads, prepares, scores and
// finishes a chunk in, when chunkPartsFor allows; the finished parts of a chunk are recorded
// together, in one transaction, as the whole chunk was. The turns held
// between reading and finishing are those of chunksInFlight parts, half
// what whole chunks held, while the transactions (and so the WAL frames
// a run writes) stay those of whole chunks (docs/performance.md,
// "Verifying many small turns").
const chunkParts = 2

// chunkPartsFor is the parts a chunk is read in: chunkParts when a part
// still fills a batch of every scorer called (a part of 128 turns, one
// scorer: two batches of 64), else 1. A scorer is called once a batch of a
// part (runJobs), so with many scorers a part would make more calls of
// fewer cases each, which costs the plugin boundary more than the turns in
// flight save (BenchmarkVerify10k: six scorers, about 43 turns each in a
// chunk of 256).
func chunkPartsFor(chunkSize, batchSize, scorers int) int {
	if chunkSize/chunkParts >= batchSize*max(scorers, 1) {
		return chunkParts
	}
	return 1
}

// chunkPart is a part of a chunk's turns; last says it ends its chunk: the
// chunk is recorded once it is finished. A part that ends a chunk may hold
// no turns: the turns ended right after the chunk's other parts.
type chunkPart struct {
	turns []*prepared
	last  bool
}

// partSizes are the sizes of the parts a chunk of n turns is read in:
// parts parts (fewer when n is smaller) that add up to n.
func partSizes(n, parts int) []int {
	k := max(min(parts, n), 1)
	sizes := make([]int, k)
	for i := range sizes {
		sizes[i] = n / k
		if i < n%k {
			sizes[i]++
		}
	}
	return sizes
}

// scoreAll scores todo in chunks, in three overlapping stages: while
// chunks are scored on the plugins, the next one's traces are parsed and the
// previous one is finished (CEL checks, scores) and recorded, each chunk as
// soon as it is scored, in order. Two chunks are scored at once: a plugin
// call waits on another process more than it computes, and a second chunk's
// calls fill that wait (docs/performance.md).
func (e *Engine) scoreAll(ctx context.Context, v *pass, turns *turnStream) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// A chunk takes a slot before its turns are read and gives it back
	// once it is finished (its rows are made): the chunks between reading
	// and finishing are bounded by the slots, whatever the channels
	// between the stages hold.
	slots := make(chan struct{}, chunksInFlight)
	ready := make(chan chunkPart, 1)
	var readErr error // the turns could not be read on: set before ready is closed
	go func() {
		defer close(ready)
		sizes := partSizes(e.cfg.ChunkSize, max(e.parts, 1))
		var cache *snapshotCache // one a chunk, shared by its parts: a snapshot's warnings are a chunk's
		for i := 0; ctx.Err() == nil; i = (i + 1) % len(sizes) {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			specs, err := turns.next(sizes[i])
			if err != nil {
				readErr = err // the chunk's parts read before are not recorded: chunks are recorded whole
				return
			}
			if len(specs) == 0 {
				if i > 0 { // the turns ended inside a chunk: record its parts read before
					select {
					case ready <- chunkPart{last: true}:
					case <-ctx.Done():
					}
				}
				return
			}
			if e.chunkRead != nil {
				e.chunkRead(len(specs))
			}
			if i == 0 {
				cache = newSnapshotCache()
			}
			c := chunkPart{turns: e.prepareChunkWith(ctx, v, specs, cache), last: i == len(sizes)-1 || len(specs) < sizes[i]}
			select {
			case ready <- c:
			case <-ctx.Done():
				return
			}
			if len(specs) < sizes[i] {
				// The turns ended. One more read finds none, or finds that
				// the file gave fewer turns than its index counted
				// (errTurnsChanged): the pass then fails after recording
				// what it read, as when a chunk is read whole.
				if _, err := turns.next(sizes[i]); err != nil {
					readErr = err
				}
				return
			}
		}
	}()

	scored := make(chan chunkPart, 1)
	recorded := make(chan error, 1)
	go func() {
		recorded <- e.recordChunks(ctx, cancel, v, turns.total, scored, slots)
	}()

	// inFlight holds the chunks being scored, in order; its capacity and the
	// one chunk the forwarder waits on bound them to two.
	type scoring struct {
		chunk chunkPart
		done  chan struct{}
	}
	inFlight := make(chan scoring, 1)
	go func() {
		defer close(scored)
		for sc := range inFlight {
			<-sc.done
			if ctx.Err() != nil {
				// Interrupted while scoring: the chunk's outcomes are the
				// interruption, not the scorers' verdict. Record nothing of
				// it or after it; a rerun resumes here.
				continue
			}
			select {
			case scored <- sc.chunk:
			case <-ctx.Done():
			}
		}
	}()
	for chunk := range ready {
		if ctx.Err() != nil {
			break
		}
		sc := scoring{chunk: chunk, done: make(chan struct{})}
		inFlight <- sc
		go func() {
			defer close(sc.done)
			if len(sc.chunk.turns) > 0 {
				e.scoreChunk(ctx, sc.chunk.turns)
			}
		}()
	}
	for range ready { // interrupted: wait for the reading stage to stop
	}
	close(inFlight)
	err := <-recorded
	if readErr != nil {
		return readErr // what was scored before the turns that could not be read is recorded; a rerun resumes
	}
	if err != nil {
		return err
	}
	return ctx.Err()
}

// recordChunks finishes each scored part's turns and records each chunk,
// its parts together, once its last part is finished; an error stops the
// run (the turns recorded so far stay, and a rerun resumes). One chunk's
// write is in flight while the next chunk's parts are finished: on
// Postgres most of a write is the server's time, which finishing the next
// chunk would otherwise wait for (docs/performance.md, "Postgres").
// Chunks are still written one at a time, in order; a chunk whose last
// part never comes (the run was interrupted, or its turns could not be
// read on) is not recorded, as a chunk read and scored whole was not.
func (e *Engine) recordChunks(ctx context.Context, cancel context.CancelFunc, v *pass, total int,
	scored <-chan chunkPart, slots <-chan struct{}) error {
	n := 0
	var failed error
	var writing chan error // the write in flight, nil when none
	var writingTurns int
	var rows []store.TurnRow // the chunk's finished parts' rows and evidence, not yet recorded
	var blobs []store.Blob
	var turns int // the chunk's turns finished so far
	await := func() {
		if writing == nil {
			return
		}
		err := <-writing
		writing = nil
		if err != nil {
			if ctx.Err() != nil {
				return // interrupted while recording: the chunk's transaction is rolled back and scoreAll reports the interruption
			}
			failed = err
			cancel() // stop scoring what can no longer be recorded
			return
		}
		n += writingTurns
		if e.cfg.Progress != nil {
			e.cfg.Progress(n, total)
		}
	}
	for part := range scored {
		if failed != nil || ctx.Err() != nil {
			<-slots
			continue // drain, so the scoring stage never blocks; an interrupted run records no more
		}
		var err error
		rows, blobs, err = e.finishChunk(ctx, v, part.turns, rows, blobs)
		turns += len(part.turns)
		<-slots // the part is finished: what it held is its rows now
		if err == nil && !part.last {
			continue // the chunk's next part is recorded with it
		}
		await()
		if failed != nil || ctx.Err() != nil {
			continue
		}
		if err != nil {
			failed = err
			cancel()
			continue
		}
		writing, writingTurns = make(chan error, 1), turns
		w := e.recordWrite(ctx, v, rows, blobs)
		rows, blobs, turns = nil, nil, 0
		if w == nil { // nothing to record: no store
			writing <- nil
			continue
		}
		go func() { writing <- w() }()
	}
	await()
	return failed
}

// finishChunk finishes a part of a chunk and appends to rows and blobs the
// rows of the turns scored (a reused turn is already recorded) and their
// evidence; nothing without a store.
func (e *Engine) finishChunk(ctx context.Context, v *pass, chunk []*prepared, rows []store.TurnRow, blobs []store.Blob) ([]store.TurnRow, []store.Blob, error) {
	if v.run != nil && rows == nil { // the chunk's first part: room for its other parts
		n := min(chunkParts*len(chunk), e.cfg.ChunkSize)
		rows = make([]store.TurnRow, 0, n)
		blobs = make([]store.Blob, 0, 2*n) // a trace and a metrics row a turn
	}
	for _, p := range chunk {
		k := p.spec.key()
		if p.reused != nil {
			p.reused.Epoch = k.Epoch // a turn recorded before epochs is epoch 1
			v.results.put(p.info, k, *p.reused)
			v.out.Reused++
			continue
		}
		r := e.finish(ctx, v.candidate, p)
		v.out.Diagnostics = append(v.out.Diagnostics, p.diags...)
		v.results.put(p.info, k, r)
		if p.retried && r.Status == score.StatusScored {
			v.out.ScoredOnRetry = append(v.out.ScoredOnRetry, turnName(k))
		}
		if p.prior != nil {
			if p.prior.Status == string(score.StatusUnscored) {
				v.out.Retried = append(v.out.Retried, turnName(k))
			} else {
				v.out.Rescored = append(v.out.Rescored, turnName(k))
			}
		}
		if v.run == nil {
			continue
		}
		row, more, err := e.scoredRow(v, p, &r, blobs)
		if err != nil {
			return rows, blobs, err
		}
		blobs = more
		rows = append(rows, row)
	}
	return rows, blobs, nil
}

// recordWrite is the write that records a chunk's rows with their
// evidence; nil without a store.
func (e *Engine) recordWrite(ctx context.Context, v *pass, rows []store.TurnRow, blobs []store.Blob) func() error {
	if v.run == nil {
		return nil
	}
	candidate := v.candidate
	return func() error {
		// One transaction: the chunk's evidence and turns are recorded
		// together or not at all.
		if err := e.cfg.Store.RecordTurns(ctx, blobs, rows); err != nil {
			return fmt.Errorf("recording turns of %s: %w", candidate, err)
		}
		return nil
	}
}

// newPass is an empty pass of candidate, before its run is begun.
func (e *Engine) newPass(candidate string) *pass {
	return &pass{candidate: candidate, prior: map[store.TurnKey]store.TurnRow{},
		results: passResults{tasks: len(e.tasks)}, out: &Outcome{Candidate: candidate}}
}

// scoredRow is the row recording a scored turn as the next revision of its
// prior one, with its evidence; blobs gains what this pass has not recorded.
func (e *Engine) scoredRow(v *pass, p *prepared, r *TurnResult, blobs []store.Blob) (store.TurnRow, []store.Blob, error) {
	row, err := turnRow(v.run, r)
	if err != nil {
		return row, blobs, err
	}
	row.InputKey, row.Revision = p.key, 1
	if p.prior != nil {
		row.Revision = p.prior.Revision + 1
	}
	blobs, err = e.evidenceOf(v, p, &row, blobs, true)
	return row, blobs, err
}

// evidenceOf sets the row's evidence references and appends the blobs this
// pass has not recorded yet (docs/evidence.md). withRow says the row is
// recorded with the blobs: the turn's metrics row is then kept in it
// (row.Metrics) rather than as a blob, which the evidence a queued run
// stores before its turns needs instead.
func (e *Engine) evidenceOf(v *pass, p *prepared, row *store.TurnRow, blobs []store.Blob, withRow bool) ([]store.Blob, error) {
	if p.failed {
		return blobs, nil // nothing readable to keep
	}
	row.TraceSHA256 = p.traceSHA
	switch {
	case p.traceBlob == nil:
	case withRow && p.traceBlob.Encoding == store.EncodingIdentity:
		// A trace of at most 512 bytes is kept in its turn's row, as
		// the metrics row is: as a blob of its own it would be an insert
		// at a random place of the blob key's index (docs/evidence.md).
		row.Trace = p.traceBlob.Data
	case v.stored.insert(p.traceSHA):
		blobs = append(blobs, *p.traceBlob)
	}
	if p.metrics != nil {
		row.MetricsSHA256 = sha256Hex(p.metrics)
		if withRow {
			row.Metrics = p.metrics
		} else if p.spec.traceSHA == "" && v.stored.insert(row.MetricsSHA256) { // a turn read from evidence has its row stored
			blobs = append(blobs, store.Blob{SHA256: row.MetricsSHA256, Kind: store.BlobMetrics,
				Encoding: store.EncodingIdentity, Size: int64(len(p.metrics)), Data: p.metrics})
		}
	}
	for _, s := range p.snaps {
		if s.sha == "" || s.raw == nil || !v.stored.insert(s.sha) {
			continue
		}
		b, err := e.compressBlob(store.BlobSnapshot, s.sha, s.raw)
		if err != nil {
			return nil, err
		}
		blobs = append(blobs, b)
	}
	return blobs, nil
}

// turnRow is the database row of a turn result. Its result, checks and
// failure tags are json.Marshal's bytes, written by appendTurnResult into
// one buffer that the checks and tags are slices of; a result it does not
// write (a NaN or infinite number) is left to json.Marshal, which reports
// it.
func turnRow(run *store.Run, r *TurnResult) (store.TurnRow, error) {
	b, checks, tags, ok := appendTurnResult(make([]byte, 0, turnResultSize(r)), r)
	if !ok {
		var err error
		if b, err = json.Marshal(r); err != nil {
			return store.TurnRow{}, fmt.Errorf("encoding turn %s: %w", r.Label, err)
		}
		checks, _ = json.Marshal(r.Checks)
		tags, _ = json.Marshal(r.FailureTags)
	}
	return store.TurnRow{
		RunID:             run.ID,
		Label:             r.Label,
		Epoch:             r.Epoch,
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
func (e *Engine) prepareChunk(ctx context.Context, v *pass, specs []*TurnSpec) []*prepared {
	return e.prepareChunkWith(ctx, v, specs, newSnapshotCache())
}

func newSnapshotCache() *snapshotCache {
	return &snapshotCache{m: map[string]*companyos.Snapshot{}}
}

// prepareChunkWith is prepareChunk with the chunk's snapshot cache: the
// parts of a chunk share one, so a snapshot many of its turns share is
// parsed, and its warnings reported, once a chunk.
func (e *Engine) prepareChunkWith(ctx context.Context, v *pass, specs []*TurnSpec, cache *snapshotCache) []*prepared {
	out := make([]*prepared, len(specs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(e.cfg.Workers, len(specs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = e.prepare(ctx, v, specs[i], cache)
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
// use the same bytes, so a scorer indexes it once; and it remembers which
// snapshot files the chunk found inside their root, so that a file many
// turns share has its links resolved once a chunk, not once a turn.
type snapshotCache struct {
	mu     sync.Mutex
	m      map[string]*companyos.Snapshot
	within map[[2]string]bool // path and root, found inside
}

// inside reports whether path is inside root (see the function inside),
// once a chunk for each path and root found inside.
func (c *snapshotCache) inside(path, root, realRoot string) bool {
	k := [2]string{path, root}
	c.mu.Lock()
	ok := c.within[k]
	c.mu.Unlock()
	if ok {
		return true
	}
	if inside(path, root, realRoot) != nil {
		return false
	}
	c.mu.Lock()
	if c.within == nil {
		c.within = map[[2]string]bool{}
	}
	c.within[k] = true
	c.mu.Unlock()
	return true
}

// prepare reads one turn's trace and snapshots and, when turns are
// recorded, computes its input key and keeps its evidence.
// A turn recorded before with the same key is reused and not parsed;
// otherwise the trace is parsed while it is hashed and compressed, and the
// snapshots are parsed. Problems are recorded on the turn; they never stop
// the run.
func (e *Engine) prepare(ctx context.Context, v *pass, ts *TurnSpec, cache *snapshotCache) *prepared {
	p := &prepared{spec: ts, info: e.tasks[ts.Label]}
	if prior, ok := v.prior[ts.key()]; ok {
		pr := prior // a copy on the heap only for a turn recorded before
		p.prior = &pr
	}
	var inline, beforeSrc, afterSrc []byte
	var err error
	if ts.inline != nil {
		inline, beforeSrc, afterSrc, err = ts.inline.load()
		if err != nil {
			return p.fail(ts.Pos, inputCode(err, "turns.read"), err)
		}
	}
	before := e.readPart(ctx, p, ts.StateBefore, beforeSrc, cache)
	after := e.readPart(ctx, p, ts.StateAfter, afterSrc, cache)
	record := !p.failed && v.run != nil
	if record && p.prior != nil && p.prior.InputKey != "" {
		// Recorded before: hash first, so an unchanged turn is not parsed.
		sha, err := e.hashTrace(ctx, ts, inline)
		if err != nil {
			return p.fail(ts.refPos(), inputCode(err, "trace.read"), err)
		}
		p.metrics = metricsRow(ts)
		if p.key = e.turnKey(p.info, ts, sha, before.sha, after.sha, p.metrics); p.reuse() {
			return p
		}
	}
	if !e.parseTrace(ctx, p, inline, record) {
		return p
	}
	if record {
		if p.metrics == nil {
			p.metrics = metricsRow(ts)
		}
		p.key = e.turnKey(p.info, ts, p.traceSHA, before.sha, after.sha, p.metrics)
	}
	p.before, p.beforeSHA = e.snapshot(p, ts.StateBefore, before, cache)
	p.after, p.afterSHA = e.snapshot(p, ts.StateAfter, after, cache)
	return p
}

// parseTrace parses the turn's trace as it streams it through the hasher
// and, when recording a trace not stored yet, the compressor. A trace read
// from stored evidence must hash to the key it was stored under.
func (e *Engine) parseTrace(ctx context.Context, p *prepared, inline []byte, record bool) bool {
	ts := p.spec
	name := ts.TracePath
	if name == "" {
		name = ts.Pos.String()
	}
	src, kept, err := e.openTrace(ctx, ts, inline)
	if err != nil {
		p.fail(ts.refPos(), inputCode(err, "trace.read"), err)
		return false
	}
	defer src.Close()
	// A trace read from stored evidence is recorded again only when its
	// turn kept it itself: the revision recorded from it keeps it as well
	// (one in a blob is there for every revision).
	tee := e.newEvidenceTee(src, record && (ts.traceSHA == "" || kept))
	turn, ds, err := trace.Parse(name, tee)
	sha, blob, ferr := tee.finish(store.BlobTrace)
	if err = errors.Join(err, ferr); err != nil {
		p.fail(ts.Pos, "trace.read", err)
		return false
	}
	if ts.traceSHA != "" && sha != ts.traceSHA {
		p.fail(ts.Pos, "evidence.corrupt", fmt.Errorf("stored trace %s reads back as %s", ts.traceSHA, sha))
		return false
	}
	p.turn, p.traceSHA, p.traceBlob = turn, sha, blob
	p.diags = append(p.diags, ds...)
	if ds.HasErrors() {
		// Over a limit of docs/run-input.md: not scored, and what was kept is dropped.
		p.failed, p.turn = true, &trace.Turn{}
		return false
	}
	return true
}

// reuse takes the turn's recorded result when it was scored from the same
// input key. A turn recorded unscored, with another key or with no key (by
// an assay before input keys), or whose record cannot be read, is scored
// again.
func (p *prepared) reuse() bool {
	pr := p.prior
	if pr == nil || pr.Status != string(score.StatusScored) || pr.InputKey == "" || pr.InputKey != p.key {
		return false
	}
	var r TurnResult
	if err := json.Unmarshal(pr.Result, &r); err != nil {
		return false
	}
	p.reused = &r
	return true
}

func (p *prepared) fail(pos diag.Pos, code string, err error) *prepared {
	p.failed = true
	if p.turn == nil {
		p.turn = &trace.Turn{}
	}
	p.diags = append(p.diags, diag.Errorf(pos, code, "%v", err))
	return p
}

// partSrc is one state part as read: its bytes and their sha256, or, for a
// snapshot file parsed before, the parsed snapshot and its sha256.
type partSrc struct {
	raw  []byte
	sha  string
	snap *companyos.Snapshot
	ok   bool // the part is present and was read
}

// readPart reads one state part; an unreadable or refused file (outside
// the turn's root, not a regular file, over state.MaxFileSize) is recorded
// on the turn.
func (e *Engine) readPart(ctx context.Context, p *prepared, part Part, inline []byte, cache *snapshotCache) partSrc {
	switch {
	case part.Empty():
		return partSrc{}
	case part.stored != "":
		if s, ok := e.blobSnaps.get(part.stored); ok {
			return partSrc{sha: part.stored, snap: s, ok: true}
		}
		raw, err := e.cfg.Store.ReadBlob(ctx, part.stored)
		if err != nil {
			p.fail(part.Pos, "state.read", err)
			return partSrc{}
		}
		return partSrc{raw: raw, sha: part.stored, ok: true}
	case part.Path == "":
		return partSrc{raw: inline, sha: sha256Hex(inline), ok: true}
	}
	// A snapshot file shared by many turns (one capture for a whole run) is
	// read, hashed and parsed once, once it is known to be inside root.
	root, realRoot := p.spec.Root, p.spec.realRoot
	if s, sha, ok := e.files.get(part.Path); ok && (root == "" || cache.inside(part.Path, root, realRoot)) {
		return partSrc{sha: sha, snap: s, ok: true}
	}
	raw, err := readInputIn(part.Path, root, realRoot, state.MaxFileSize)
	if tl := (*tooLargeError)(nil); errors.As(err, &tl) {
		p.failed = true
		p.diags = append(p.diags, state.TooLarge(part.Path, tl.size))
		return partSrc{}
	}
	if err != nil {
		p.fail(part.refPos(), inputCode(err, "state.read"), fmt.Errorf("reading state snapshot: %w", err))
		return partSrc{}
	}
	return partSrc{raw: raw, sha: sha256Hex(raw), ok: true}
}

// snapshot parses one state part read by readPart and returns it with the
// sha256 of its bytes; nil when absent, unreadable or invalid (the problem
// is recorded on the turn).
func (e *Engine) snapshot(p *prepared, part Part, src partSrc, cache *snapshotCache) (*companyos.Snapshot, string) {
	if !src.ok {
		return nil, ""
	}
	if src.snap != nil {
		return src.snap, src.sha
	}
	name := part.Pos.String()
	if part.Path != "" {
		name = part.Path
	}
	cache.mu.Lock()
	s, ok := cache.m[src.sha]
	cache.mu.Unlock()
	if !ok {
		var ds diag.List
		s, ds = state.Parse(name, src.raw)
		p.diags = append(p.diags, ds...)
		if ds.HasErrors() || s == nil {
			p.failed = true
			return nil, ""
		}
		cache.mu.Lock()
		if prev, ok := cache.m[src.sha]; ok {
			s = prev
		} else {
			cache.m[src.sha] = s
		}
		cache.mu.Unlock()
	}
	if part.stored != "" { // stored evidence is stored already
		e.blobSnaps.put(src.sha, s)
	} else {
		p.snaps = append(p.snaps, snapshotBlob{sha: src.sha, raw: src.raw})
	}
	if part.Path != "" {
		e.files.put(part.Path, s, src.sha)
	}
	return s, src.sha
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hexString(sum[:])
}

// hexString is hex.EncodeToString of a sha256 sum with one allocation, not two.
func hexString(sum []byte) string {
	var buf [2 * sha256.Size]byte
	if len(sum) != sha256.Size {
		return hex.EncodeToString(sum)
	}
	hex.Encode(buf[:], sum)
	return string(buf[:])
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
	upstream int // index into the task's upstream list, or -1 for the task scorer
	c        *scorer.Case
}

// scoreChunk scores every turn of a chunk: first each turn's task scorer
// (for a task whose scorer needs upstream results: its upstream scorers),
// then the scorers that need upstream results, with those results.
func (e *Engine) scoreChunk(ctx context.Context, chunk []*prepared) {
	byScorer := map[scorer.ID][]job{}
	for i, p := range chunk {
		if p.failed || p.reused != nil {
			continue
		}
		t := p.info.task
		if ups, ok := e.upstreams[t.Label]; ok {
			p.ups = make([]scorer.Upstream, len(ups))
			for k, id := range ups {
				byScorer[id] = append(byScorer[id], job{p: p, upstream: k, c: e.newCase(i, p, id)})
			}
			continue
		}
		byScorer[t.Scorer] = append(byScorer[t.Scorer], job{p: p, upstream: -1, c: e.newCase(i, p, t.Scorer)})
	}
	e.runJobs(ctx, byScorer)

	combining := map[scorer.ID][]job{}
	for i, p := range chunk {
		t := p.info.task
		if _, ok := e.upstreams[t.Label]; !ok || p.failed || p.reused != nil || p.upErr != nil {
			continue
		}
		c := e.newCase(i, p, t.Scorer)
		c.Upstream = p.ups
		combining[t.Scorer] = append(combining[t.Scorer], job{p: p, upstream: -1, c: c})
	}
	if len(combining) > 0 {
		e.runJobs(ctx, combining)
	}
}

func (e *Engine) newCase(i int, p *prepared, id scorer.ID) *scorer.Case {
	return &scorer.Case{
		ID:          strconv.Itoa(i),
		Task:        e.only(p.info.wire(), id),
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
				j.p.retried = j.p.retried || o.ScoredOnRetry // set only on a result
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
		Epoch:       p.spec.key().Epoch,
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
	// The turn is always attributed to its task's scorer, by id at least,
	// even when the configuration gave no identity for it.
	r.Scorer.ID = cmp.Or(r.Scorer.ID, string(t.Scorer))
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
	checks, nChecks := e.turnChecks(t, p)
	for _, u := range p.ups {
		for _, d := range u.Result.Diagnostics {
			r.Diagnostics = append(r.Diagnostics, bound(fmt.Sprintf("%s: %s", u.Scorer, d)))
		}
	}
	for _, d := range res.Diagnostics {
		r.Diagnostics = append(r.Diagnostics, bound(fmt.Sprintf("%s: %s", t.Scorer, d)))
	}
	cel, celWeighted := e.celChecks(ctx, p, r.Persona, checks)
	checks = append(checks, cel...)
	kpiScore := score.KPIScore(res.Score, nChecks, celWeighted)
	turnScore := score.TurnScore(sc.ProcessWeight, sc.KPIWeight, process, kpiScore)
	r.Status = score.StatusScored
	r.KPIScore, r.TurnScore = &kpiScore, &turnScore
	if checks == nil {
		checks = []CheckResult{} // [] in results.json, never null
	}
	r.Checks = checks
	r.FailureTags = turnTags(res, p.ups, checks, hostTags)
	return r
}

// celChecks evaluates the task's CEL checks on a scored turn, given its
// scorer checks; a failed check carries its failure_tag.
func (e *Engine) celChecks(ctx context.Context, p *prepared, persona string, checks []CheckResult) ([]CheckResult, []score.Weighted) {
	t := p.info.task
	if e.cfg.CEL == nil || len(t.CEL) == 0 {
		return nil, nil
	}
	checkScores := make(map[string]float64, len(checks))
	for _, c := range checks {
		checkScores[c.Name] = c.Score
	}
	var out []CheckResult
	var weighted []score.Weighted
	for _, c := range e.cfg.CEL.Evaluate(ctx, t, kpi.Input{
		Turn:         p.turn,
		Label:        t.Label,
		Persona:      persona,
		LatencyS:     p.spec.LatencyS,
		CostUSD:      p.spec.CostUSD,
		State:        p.after,
		Before:       p.before,
		ScorerScore:  p.result.Score,
		ScorerChecks: checkScores,
	}) {
		cr := CheckResult{Name: c.Name, Source: "cel", Score: c.Score, Passed: c.Passed, Detail: bound(c.Detail)}
		if !c.Passed {
			cr.FailureTag = c.FailureTag
		}
		out = append(out, cr)
		weighted = append(weighted, score.Weighted{Score: c.Score, Weight: c.Weight})
	}
	return out, weighted
}

// turnChecks are a scored turn's scorer checks and how many weigh in its KPI
// score. For a task whose scorer needs upstream results they are the
// upstream scorers' checks, each under its own scorer, then the combining
// scorer's checks on KPI keys it declares itself (a check it passes on from
// upstream is not counted twice); otherwise the task scorer's checks.
func (e *Engine) turnChecks(t *pack.Task, p *prepared) ([]CheckResult, int) {
	res := p.result
	if _, ok := e.upstreams[t.Label]; !ok {
		return e.scorerChecks(t.Scorer, res.Checks), len(res.Checks)
	}
	var checks []CheckResult
	for _, u := range p.ups {
		checks = append(checks, e.scorerChecks(u.Scorer, u.Result.Checks)...)
	}
	own := e.cfg.Descriptions[t.Scorer]
	var mine []scorer.Check
	for _, c := range res.Checks {
		if own.Declares(c.KPI) {
			mine = append(mine, c)
		}
	}
	checks = append(checks, e.scorerChecks(t.Scorer, mine)...)
	return checks, len(checks)
}

// turnTags are a scored turn's failure tags (docs/verify-engine.md): the
// scorer's Result.FailureTags and its upstream scorers', the tag of every
// failed check (scorer, upstream and CEL checks alike), and the tags the
// host derives from the trace and the budgets.
func turnTags(res *scorer.Result, ups []scorer.Upstream, checks []CheckResult, hostTags []string) []string {
	tags := append([]string(nil), res.FailureTags...)
	for _, u := range ups {
		tags = append(tags, u.Result.FailureTags...)
	}
	for _, c := range checks {
		if !c.Passed {
			tags = append(tags, c.FailureTag)
		}
	}
	return score.MergeTags(tags, hostTags)
}

// scorerChecks converts a scorer's checks, bounding every stored excerpt. A
// failed check carries its own failure tag, else the one id declares for
// the check's KPI key; a passed check carries none.
func (e *Engine) scorerChecks(id scorer.ID, cs []scorer.Check) []CheckResult {
	d := e.cfg.Descriptions[id]
	out := make([]CheckResult, len(cs))
	for i, c := range cs {
		out[i] = CheckResult{Name: c.KPI, Source: "scorer:" + string(id), Score: c.Score, Passed: c.Passed,
			Detail: bound(c.Detail)}
		if !c.Passed {
			out[i].FailureTag = firstNonEmpty(c.FailureTag, declaredTag(d, c.KPI))
		}
		for _, ev := range c.Evidence {
			out[i].Evidence = append(out[i].Evidence, bound(ev))
		}
	}
	return out
}

// declaredTag is the failure tag d declares for KPI key k, if any.
func declaredTag(d scorer.Description, k string) string {
	for _, kp := range d.KPIs {
		if kp.Key == k {
			return kp.FailureTag
		}
	}
	return ""
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
