package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/kpi"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/plugins/builtin"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/batchrun"
)

const fixtures = "../../testdata/fixtures"

// local scores in-process with the built-in scorers; fail makes a scorer
// break on every case.
type local struct {
	scorers map[scorer.ID]sdk.Scorer
	fail    map[scorer.ID]bool
	mu      sync.Mutex
	calls   map[scorer.ID]int // cases seen per scorer
	labels  map[string]int    // cases seen per task label
}

// task is t's wire form, as the engine makes it (taskInfo.wire).
func (s *wireShare) task(t *pack.Task) (scorer.Task, error) {
	kpis, catalog, err := s.parts(t)
	if err != nil {
		return scorer.Task{}, err
	}
	return wireTask(t, kpis, *catalog), nil
}

func newLocal() *local {
	l := &local{scorers: map[scorer.ID]sdk.Scorer{}, fail: map[scorer.ID]bool{}, calls: map[scorer.ID]int{}, labels: map[string]int{}}
	for _, s := range builtin.Scorers() {
		l.scorers[s.Describe().ID] = s
	}
	return l
}

func (l *local) Score(ctx context.Context, id scorer.ID, cases []*scorer.Case) []batchrun.Outcome {
	l.mu.Lock()
	l.calls[id] += len(cases)
	for _, c := range cases {
		l.labels[c.Task.Label]++
	}
	l.mu.Unlock()
	out := make([]batchrun.Outcome, len(cases))
	for i, c := range cases {
		if l.fail[id] {
			out[i].Err = errors.New("plugin crashed")
			continue
		}
		out[i].Result, out[i].Err = l.scorers[id].Score(ctx, c)
	}
	return out
}

func (l *local) descriptions() map[scorer.ID]scorer.Description {
	m := map[scorer.ID]scorer.Description{}
	for id, s := range l.scorers {
		m[id] = s.Describe()
	}
	return m
}

func loadFixturePack(t *testing.T, l *local) (*pack.Pack, *kpi.Set) {
	t.Helper()
	ch := kpi.NewChecker()
	p, diags := pack.Load(filepath.Join(fixtures, "pack.yaml"), pack.Options{Scorers: l.descriptions(), Checks: []pack.Check{ch}})
	if diags.HasErrors() {
		t.Fatalf("loading the fixture pack: %v", diags)
	}
	return p, ch.Set()
}

// fixtureInput is one turn per fixture task, all good or all bad.
func fixtureInput(p *pack.Pack, candidate, kind string) *Input {
	in := &Input{Candidate: candidate}
	for _, t := range p.Tasks {
		tr := filepath.Join(fixtures, "traces", t.Label+"."+kind+".ndjson")
		ts := TurnSpec{Candidate: candidate, Label: t.Label, TracePath: tr, Pos: diag.Pos{File: tr}}
		before := filepath.Join(fixtures, "state", t.Label+".before.json")
		after := filepath.Join(fixtures, "state", t.Label+"."+kind+".after.json")
		if fileExists(before) {
			ts.StateBefore = Part{Path: before}
		}
		if fileExists(after) {
			ts.StateAfter = Part{Path: after}
		}
		in.Turns = append(in.Turns, ts)
	}
	return in
}

// openStore opens the store at dsn, closed when the test ends.
func openStore(t testing.TB, dsn string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newEngine(t *testing.T, l *local, st *store.Store) (*Engine, *pack.Pack) {
	t.Helper()
	p, set := loadFixturePack(t, l)
	e, err := New(Config{Pack: p, Scorers: l, Descriptions: l.descriptions(), CEL: set, Store: st,
		ScorerVersion: "test-version", ChunkSize: 2, BatchSize: 2})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e, p
}

func TestVerifyFixtures(t *testing.T) {
	l := newLocal()
	e, p := newEngine(t, l, nil)
	good, err := e.Verify(context.Background(), fixtureInput(p, "good", "good"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := e.Verify(context.Background(), fixtureInput(p, "bad", "bad"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(good.Results) != len(p.Tasks) {
		t.Fatalf("good results = %d, want %d", len(good.Results), len(p.Tasks))
	}
	for i, g := range good.Results {
		b := bad.Results[i]
		if g.Label != p.Tasks[i].Label {
			t.Errorf("result %d is %s, want pack order %s", i, g.Label, p.Tasks[i].Label)
		}
		if g.Status != score.StatusScored || b.Status != score.StatusScored {
			t.Errorf("%s: status good %s bad %s, want scored (diagnostics %v %v)", g.Label, g.Status, b.Status, g.Diagnostics, b.Diagnostics)
			continue
		}
		if *g.TurnScore <= *b.TurnScore {
			t.Errorf("%s: good turn score %.3f <= bad %.3f", g.Label, *g.TurnScore, *b.TurnScore)
		}
		if *g.KPIScore < 0.8 {
			t.Errorf("%s: good KPI score %.3f, want >= 0.8; checks %+v", g.Label, *g.KPIScore, g.Checks)
		}
		want := score.TurnScore(p.Scoring.ProcessWeight, p.Scoring.KPIWeight, *g.ProcessScore, *g.KPIScore)
		if *g.TurnScore != want {
			t.Errorf("%s: turn score %v, want %v", g.Label, *g.TurnScore, want)
		}
	}
	// Composite checks name the upstream scorer that made them.
	for _, r := range good.Results {
		if p.Task(r.Label).Scorer != "composite" {
			continue
		}
		for _, c := range r.Checks {
			if c.Source == "scorer:composite" {
				t.Errorf("composite check %s has source %s, want its upstream scorer", c.Name, c.Source)
			}
		}
	}
	if good.Summary.MeanScore <= bad.Summary.MeanScore {
		t.Errorf("good mean %.3f <= bad mean %.3f", good.Summary.MeanScore, bad.Summary.MeanScore)
	}
}

func TestVerifyScorerErrorMarksUnscored(t *testing.T) {
	l := newLocal()
	l.fail["task_state"] = true
	e, p := newEngine(t, l, nil)
	out, err := e.Verify(context.Background(), fixtureInput(p, "c", "good"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Results {
		if p.Task(r.Label).Scorer != "task_state" {
			if r.Status != score.StatusScored {
				t.Errorf("%s: status %s, want scored (other scorers go on)", r.Label, r.Status)
			}
			continue
		}
		if r.Status != score.StatusUnscored || r.TurnScore != nil || r.KPIScore != nil {
			t.Errorf("%s: status %s turn %v kpi %v, want unscored with no scores", r.Label, r.Status, r.TurnScore, r.KPIScore)
		}
		if !contains(r.FailureTags, "scorer_error") {
			t.Errorf("%s: tags %v, want scorer_error", r.Label, r.FailureTags)
		}
	}
	if out.Summary.Unscored != 1 || out.Summary.Gates.Passed {
		t.Errorf("summary unscored %d gates passed %t, want 1 and false", out.Summary.Unscored, out.Summary.Gates.Passed)
	}
}

func TestVerifyMissingAndUnknownLabels(t *testing.T) {
	l := newLocal()
	e, p := newEngine(t, l, nil)
	in := fixtureInput(p, "c", "good")
	in.Turns = in.Turns[1:] // the first task has no turn
	extra := in.Turns[0]
	extra.Label = "not_in_pack"
	in.Turns = append(in.Turns, extra)
	out, err := e.Verify(context.Background(), in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Results[0].Status; got != score.StatusMissing {
		t.Errorf("first task status %s, want missing", got)
	}
	if out.Summary.Missing != 1 || out.Summary.Gates.Passed {
		t.Errorf("missing %d gates passed %t, want 1 and false", out.Summary.Missing, out.Summary.Gates.Passed)
	}
	var warned bool
	for _, d := range out.Diagnostics {
		warned = warned || (d.Code == "run.unknown_label" && strings.Contains(d.Message, "not_in_pack"))
	}
	if !warned || out.Diagnostics.HasErrors() {
		t.Errorf("diagnostics %v, want one warning naming not_in_pack and no errors", out.Diagnostics)
	}
}

func TestVerifyUnreadableSnapshotIsRecordedNotFatal(t *testing.T) {
	l := newLocal()
	e, p := newEngine(t, l, nil)
	in := fixtureInput(p, "c", "good")
	in.Turns[0].StateAfter = Part{Path: filepath.Join(t.TempDir(), "nope.json")}
	out, err := e.Verify(context.Background(), in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Results[0].Status != score.StatusUnscored || !out.Diagnostics.HasErrors() {
		t.Errorf("status %s diagnostics %v, want unscored and an error", out.Results[0].Status, out.Diagnostics)
	}
	for _, r := range out.Results[1:] {
		if r.Status != score.StatusScored {
			t.Errorf("%s: %s, want scored", r.Label, r.Status)
		}
	}
}

func TestVerifyResumesAndFresh(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "assay.db"))
	l := newLocal()
	e, p := newEngine(t, l, st)
	full := fixtureInput(p, "c", "good")
	partial := &Input{Candidate: "c", Turns: full.Turns[:3]}
	first, err := e.Verify(ctx, partial, Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for k, v := range l.labels {
		seen[k] = v
	}
	second, err := e.Verify(ctx, full, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if second.Reused != 3 || second.RunID != first.RunID || second.Attempt != first.Attempt {
		t.Errorf("resumed %d run %d attempt %d, want 3, %d, %d", second.Reused, second.RunID, second.Attempt, first.RunID, first.Attempt)
	}
	for _, ts := range partial.Turns {
		if l.labels[ts.Label] != seen[ts.Label] {
			t.Errorf("resumed turn %s was scored again", ts.Label)
		}
	}
	rows, err := st.TurnsDone(ctx, second.RunID, second.Attempt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(p.Tasks) {
		t.Errorf("recorded %d turns, want %d", len(rows), len(p.Tasks))
	}
	// A resumed result equals a freshly scored one.
	fresh, err := e.Verify(ctx, full, Options{Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Attempt != second.Attempt+1 || fresh.Reused != 0 {
		t.Errorf("fresh attempt %d resumed %d, want %d and 0", fresh.Attempt, fresh.Reused, second.Attempt+1)
	}
	if diff := cmp.Diff(second.Summary, fresh.Summary); diff != "" {
		t.Errorf("resumed summary differs from a fresh one (-resumed +fresh):\n%s", diff)
	}
}

func TestReadTurnsFileDiagnostics(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "turns.jsonl")
	src := `{"label":"a","trace":[{"type":"done","reply":"hi","finalized":true}]}
{"label":"b","trace":[{"type":"done"}],"started_at":"yesterday"}
not json
{"label":"a","trace":[]}
{"trace_file":"x.ndjson"}
{"label":"c","trace":{"type":"done"}}
`
	writeFile(t, path, src)
	inputs, diags, err := ReadTurnsFile(path, "cand")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range diags {
		got = append(got, d.Pos.String()+" "+d.Code)
	}
	want := []string{
		path + ":2:40 turns.field",
		path + ":3:2 turns.syntax",
		path + ":4:1 turns.duplicate_label",
		path + ":5:1 turns.field",
		path + ":6:14 turns.field",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadTurnsFile diagnostics (-want +got):\n%s\nall: %v", diff, diags)
	}
	if len(inputs) != 1 || len(inputs[0].Turns) != 1 || inputs[0].Turns[0].Label != "a" {
		t.Fatalf("inputs = %+v, want one candidate with turn a", inputs)
	}
	nd, _, _, err := inputs[0].Turns[0].inline.load()
	if err != nil || strings.TrimSpace(string(nd)) != `{"type":"done","reply":"hi","finalized":true}` {
		t.Errorf("inline trace = %q, %v", nd, err)
	}
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// chatty returns a check whose detail, evidence and diagnostic are long.
type chatty struct{ n int }

func (c chatty) Score(ctx context.Context, id scorer.ID, cases []*scorer.Case) []batchrun.Outcome {
	out := make([]batchrun.Outcome, len(cases))
	long := strings.Repeat("é", c.n)
	for i := range cases {
		out[i].Result = &scorer.Result{Score: 0, Checks: []scorer.Check{{KPI: "answer_keywords", Detail: long, Evidence: []string{long}}},
			Diagnostics: []string{long}}
	}
	return out
}

// Every excerpt a turn stores (check details, evidence, diagnostics) is
// bounded at 500 characters with the truncation marker.
func TestVerifyBoundsStoredExcerpts(t *testing.T) {
	l := newLocal()
	p, set := loadFixturePack(t, l)
	e, err := New(Config{Pack: p, Scorers: chatty{n: 600}, Descriptions: l.descriptions(), CEL: set})
	if err != nil {
		t.Fatal(err)
	}
	var label string
	for _, tk := range p.Tasks {
		if tk.Scorer == "answer_keywords" {
			label = tk.Label
		}
	}
	in := fixtureInput(p, "c", "good")
	out, err := e.Verify(context.Background(), in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Results {
		if r.Label != label {
			continue
		}
		texts := append([]string{r.Checks[0].Detail}, r.Checks[0].Evidence...)
		texts = append(texts, r.Diagnostics...)
		for _, s := range texts {
			if n := len([]rune(s)); n != 500 || !strings.HasSuffix(s, "… [truncated]") {
				t.Errorf("stored excerpt of %d runes ending %q, want 500 ending in the marker", n, s[len(s)-20:])
			}
		}
		return
	}
	t.Fatalf("no result for %s", label)
}

// cancelling scores normally until it has seen n cases, then cancels the
// run's context and reports the cases as failed, as a plugin host does when
// its calls are cancelled.
type cancelling struct {
	*local
	mu     sync.Mutex
	n      int
	cancel context.CancelFunc
}

func (c *cancelling) Score(ctx context.Context, id scorer.ID, cases []*scorer.Case) []batchrun.Outcome {
	c.mu.Lock()
	c.n -= len(cases)
	stop := c.n < 0
	c.mu.Unlock()
	if stop {
		c.cancel()
		out := make([]batchrun.Outcome, len(cases))
		for i := range out {
			out[i].Err = context.Canceled
		}
		return out
	}
	return c.local.Score(ctx, id, cases)
}

// An interrupted verification records only turns that were really scored:
// the interruption never becomes an unscored turn, and a rerun scores the rest.
func TestVerifyInterruptRecordsNoFalseUnscored(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	st := openStore(t, filepath.Join(t.TempDir(), "assay.db"))
	l := newLocal()
	sc := &cancelling{local: l, n: 3, cancel: cancel}
	p, set := loadFixturePack(t, l)
	e, err := New(Config{Pack: p, Scorers: sc, Descriptions: l.descriptions(), CEL: set, Store: st,
		ScorerVersion: "v", ChunkSize: 2, BatchSize: 2, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	in := fixtureInput(p, "c", "good")
	if _, err := e.Verify(ctx, in, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Verify after cancel = %v, want context.Canceled", err)
	}
	run, err := st.BeginRun(context.Background(), store.RunKey{Candidate: "c", PackSHA256: p.SHA256, PackName: p.Name(), ScorerVersion: "v"}, false)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.TurnsDone(context.Background(), run.ID, run.Attempt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == len(p.Tasks) {
		t.Fatalf("all %d turns recorded; the run was not interrupted", len(rows))
	}
	for k, r := range rows {
		if r.Status != string(score.StatusScored) {
			t.Errorf("turn %s recorded as %s after an interruption, want only scored turns", k.Label, r.Status)
		}
	}
	// The rerun scores the rest; every turn ends up scored exactly once.
	e2, _ := New(Config{Pack: p, Scorers: l, Descriptions: l.descriptions(), CEL: set, Store: st, ScorerVersion: "v"})
	out, err := e2.Verify(context.Background(), in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Reused != len(rows) || out.Summary.Unscored != 0 || out.Summary.N != len(p.Tasks) {
		t.Errorf("rerun: resumed %d (want %d), unscored %d, n %d", out.Reused, len(rows), out.Summary.Unscored, out.Summary.N)
	}
}

// A resumed run tries again the turns it could not score, replacing them.
func TestVerifyResumeRetriesUnscored(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "assay.db"))
	l := newLocal()
	l.fail["tool_sequence"] = true
	e, p := newEngine(t, l, st)
	in := fixtureInput(p, "c", "good")
	first, err := e.Verify(ctx, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if first.Summary.Unscored == 0 {
		t.Fatalf("no unscored turn with a failing tool_sequence")
	}
	l.fail["tool_sequence"] = false // the plugin is fixed
	second, err := e.Verify(ctx, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Retried) != first.Summary.Unscored || len(second.Rescored) != 0 {
		t.Errorf("after the fix: retried %v rescored %v, want the %d unscored turns retried and none rescored",
			second.Retried, second.Rescored, first.Summary.Unscored)
	}
	if second.Summary.Unscored != 0 || second.Reused != len(p.Tasks)-first.Summary.Unscored {
		t.Errorf("after the fix: unscored %d, resumed %d; want 0 and %d", second.Summary.Unscored, second.Reused, len(p.Tasks)-first.Summary.Unscored)
	}
	rows, err := st.TurnsDone(ctx, second.RunID, second.Attempt)
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range rows {
		if r.Status != string(score.StatusScored) {
			t.Errorf("%s stored as %s", k.Label, r.Status)
		}
	}
	if len(rows) != len(p.Tasks) {
		t.Errorf("%d rows stored, want %d", len(rows), len(p.Tasks))
	}
}

// copyInput copies in's trace and snapshot files into a new directory, so a
// test can edit them.
func copyInput(t *testing.T, in *Input) *Input {
	t.Helper()
	dir := t.TempDir()
	cp := func(path string) string {
		if path == "" {
			return ""
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dir, filepath.Base(path))
		writeFile(t, to, string(b))
		return to
	}
	out := &Input{Candidate: in.Candidate}
	for _, ts := range in.Turns {
		ts.TracePath = cp(ts.TracePath)
		ts.Pos = diag.Pos{File: ts.TracePath}
		ts.StateBefore.Path = cp(ts.StateBefore.Path)
		ts.StateAfter.Path = cp(ts.StateAfter.Path)
		out.Turns = append(out.Turns, ts)
	}
	return out
}

// Issue 12 item 2: a recorded turn is reused only when its inputs are
// byte-identical; a turn whose trace or metrics changed is scored again as
// the turn's next revision, and the outcome names it.
func TestResumeKeyedByContent(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "assay.db"))
	l := newLocal()
	e, p := newEngine(t, l, st)
	in := copyInput(t, fixtureInput(p, "c", "good"))
	first, err := e.Verify(ctx, in, Options{})
	if err != nil {
		t.Fatal(err)
	}

	again, err := e.Verify(ctx, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Reused != len(p.Tasks) || len(again.Rescored) != 0 {
		t.Errorf("unchanged input: reused %d rescored %v, want %d and none", again.Reused, again.Rescored, len(p.Tasks))
	}

	// Edit one trace (the bad run's trace of that task) and one latency.
	edited, metric := in.Turns[0], in.Turns[1]
	bad, err := os.ReadFile(filepath.Join(fixtures, "traces", edited.Label+".bad.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, edited.TracePath, string(bad))
	lat := 12.5
	in.Turns[1].LatencyS = &lat
	before := map[string]int{}
	for k, v := range l.labels {
		before[k] = v
	}
	second, err := e.Verify(ctx, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{edited.Label, metric.Label}
	sort.Strings(want)
	if diff := cmp.Diff(want, second.Rescored); diff != "" {
		t.Errorf("Rescored (-want +got):\n%s", diff)
	}
	if second.Reused != len(p.Tasks)-2 || second.RunID != first.RunID || second.Attempt != first.Attempt {
		t.Errorf("reused %d run %d attempt %d, want %d, %d, %d", second.Reused, second.RunID, second.Attempt,
			len(p.Tasks)-2, first.RunID, first.Attempt)
	}
	for _, tk := range p.Tasks {
		scoredAgain := l.labels[tk.Label] != before[tk.Label]
		if scoredAgain != (tk.Label == edited.Label || tk.Label == metric.Label) {
			t.Errorf("%s: scored again %t", tk.Label, scoredAgain)
		}
	}
	// The rescored turn is what scoring the edited input afresh gives.
	plain, _ := newEngine(t, l, nil)
	fresh, err := plain.Verify(ctx, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fresh.Results, second.Results, cmp.AllowUnexported(TurnResult{})); diff != "" {
		t.Errorf("results after the edit differ from a fresh verification (-fresh +resumed):\n%s", diff)
	}
	if cmp.Equal(first.Results[0], fresh.Results[0], cmp.AllowUnexported(TurnResult{})) {
		t.Fatalf("the edited trace did not change the turn's result; the test proves nothing")
	}
	revs, err := st.TurnRevisions(ctx, second.RunID, second.Attempt, edited.Label)
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 2 || revs[0].InputKey == revs[1].InputKey || revs[1].Revision != 2 {
		t.Errorf("revisions of %s: %d, want 2 with different input keys (the first kept)", edited.Label, len(revs))
	}
}

// TestWireTasksShareEqualKPIs: tasks the pack gives one KPI map share one
// encoded map in their wire forms, and tasks without a catalog of their own
// share the pack's; each wire form is what it was built from alone.
func TestWireTasksShareEqualKPIs(t *testing.T) {
	t.Parallel()
	kpis := map[string]any{"answer_keywords": []any{"release", "pass"}}
	p := &pack.Pack{ToolCatalog: []string{"search"}, Tasks: []*pack.Task{
		{Label: "a", KPIs: kpis},
		{Label: "b", KPIs: kpis},
		{Label: "c", KPIs: map[string]any{"answer_keywords": []any{"release", "pass"}}, ToolCatalog: []string{"fetch"}},
		{Label: "d"},
	}}
	s := newWireShare(p)
	var got []scorer.Task
	for _, task := range p.Tasks {
		w, err := s.task(task)
		if err != nil {
			t.Fatalf("task(%q): %v", task.Label, err)
		}
		got = append(got, w)
	}
	want := map[string]json.RawMessage{"answer_keywords": json.RawMessage(`["release","pass"]`)}
	for i, w := range got[:3] {
		if diff := cmp.Diff(want, w.KPIs); diff != "" {
			t.Errorf("task %d KPIs (-want +got):\n%s", i, diff)
		}
	}
	if reflect.ValueOf(got[0].KPIs).Pointer() != reflect.ValueOf(got[1].KPIs).Pointer() {
		t.Error("tasks a and b have one KPI map in the pack but two encoded maps")
	}
	if reflect.ValueOf(got[0].KPIs).Pointer() == reflect.ValueOf(got[2].KPIs).Pointer() {
		t.Error("task c's KPI map is its own in the pack but shared in its wire form")
	}
	if got[3].KPIs == nil || len(got[3].KPIs) != 0 {
		t.Errorf("task d KPIs = %#v, want an empty map", got[3].KPIs)
	}
	if diff := cmp.Diff([]string{"search", "fetch"}, got[2].ToolCatalog); diff != "" {
		t.Errorf("task c catalog (-want +got):\n%s", diff)
	}
	a := got[0].ToolCatalog
	if diff := cmp.Diff([]string{"search"}, a); diff != "" {
		t.Errorf("task a catalog (-want +got):\n%s", diff)
	}
	_ = append(a, "x") // the shared catalog has no room: appending copies
	if diff := cmp.Diff([]string{"search"}, got[1].ToolCatalog[:cap(got[1].ToolCatalog)]); diff != "" {
		t.Errorf("task b catalog after an append to a's (-want +got):\n%s", diff)
	}
}

// TestEngineWireIsShared: the wire form the engine makes for a case when
// it needs it is the one wireShare gives, field for field, its KPI map and
// catalog the shared ones, for tasks with and without every field.
func TestEngineWireIsShared(t *testing.T) {
	t.Parallel()
	kpis := map[string]any{"answer_keywords": []any{"release", "pass"}}
	five := 5
	p := &pack.Pack{ToolCatalog: []string{"search"}, Tasks: []*pack.Task{
		{Label: "a", Persona: "cto", Prompt: "Say <it>.", Scorer: "s", KPIs: kpis, SliceTags: []string{"x"},
			Safety: pack.Safety{RequiresHuman: true, MaxToolCalls: &five}},
		{Label: "b", Scorer: "s", KPIs: kpis, ToolCatalog: []string{"fetch"}},
		{Label: "c", Scorer: "s"},
	}}
	e, err := New(Config{Pack: p, Scorers: constScorer{}, Descriptions: map[scorer.ID]scorer.Description{"s": {ID: "s"}}})
	if err != nil {
		t.Fatal(err)
	}
	s := newWireShare(p)
	for _, task := range p.Tasks {
		want, err := s.task(task)
		if err != nil {
			t.Fatalf("task(%q): %v", task.Label, err)
		}
		got := e.tasks[task.Label].wire()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("task %q: wire() (-wireShare +engine):\n%s", task.Label, diff)
		}
	}
	a, b := e.tasks["a"].wire(), e.tasks["b"].wire()
	if reflect.ValueOf(a.KPIs).Pointer() != reflect.ValueOf(b.KPIs).Pointer() {
		t.Error("tasks a and b have one KPI map in the pack but two in the engine")
	}
	if a.Safety.MaxToolCalls != &five {
		t.Error("task a's wire form does not point at the pack task's max_tool_calls")
	}
}

// TestVerifyRecordFailureKeepsEarlierChunks: while one chunk is written the
// next is finished (docs/performance.md, "Postgres"), but chunks are still
// recorded in order: when a chunk cannot be recorded the run fails with
// the store's error, the chunks before it are recorded, none after it is,
// and progress counts only what was recorded.
func TestVerifyRecordFailureKeepsEarlierChunks(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "assay.db"))
	l := newLocal()
	p, set := loadFixturePack(t, l)
	const failAt = 3 // the fourth task's chunk
	refused := p.Tasks[failAt].Label
	if _, err := st.DB().ExecContext(ctx, `CREATE TRIGGER refuse BEFORE INSERT ON company_eval_turns
		WHEN NEW.label = '`+refused+`' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
	var progress []int
	e, err := New(Config{Pack: p, Scorers: l, Descriptions: l.descriptions(), CEL: set, Store: st,
		ScorerVersion: "v", ChunkSize: 1, BatchSize: 1, Workers: 1, Progress: func(n, _ int) { progress = append(progress, n) }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Verify(ctx, fixtureInput(p, "c", "good"), Options{})
	if err == nil || !strings.Contains(err.Error(), "refused by the test") {
		t.Fatalf("Verify() = %v, want the store's error", err)
	}
	run, err := st.BeginRun(ctx, store.RunKey{Candidate: "c", PackSHA256: p.SHA256, PackName: p.Name(), ScorerVersion: "v"}, false)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.TurnsDone(ctx, run.ID, run.Attempt)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for k := range rows {
		got = append(got, k.Label)
	}
	for _, task := range p.Tasks[:failAt] {
		want = append(want, task.Label)
	}
	sort.Strings(got)
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("turns recorded (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 2, 3}, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

func TestHexString(t *testing.T) {
	for _, b := range [][]byte{nil, {0xab}, make([]byte, 31), bytes.Repeat([]byte{0x0f, 0xf0}, 16), make([]byte, 33)} {
		if got, want := hexString(b), hex.EncodeToString(b); got != want {
			t.Errorf("hexString(%x) = %q, want %q", b, got, want)
		}
	}
	sum := sha256.Sum256([]byte("assay"))
	if got, want := sha256Hex([]byte("assay")), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("sha256Hex = %q, want %q", got, want)
	}
}
