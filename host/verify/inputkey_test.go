package verify

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/pkg/scorer"
)

// keyStrings are strings chosen to break a JSON string writer: characters
// encoding/json escapes (quotes, backslashes, HTML, controls, U+2028 and
// U+2029, invalid UTF-8), non-ASCII, DEL and the empty string.
var keyStrings = []string{"", "t0000001", "cto", "release", `a"b`, `a\b`, "<script>", "a<b", "a&b", "x>y",
	"tab\there", "nl\n", "\x00", "\x1f", "\x7f", "é", "日本", "\u2028", "\u2029", "\xff", "a\xc3", "turn.finalized && !turn.error"}

// keyFloats are numbers at the edges of json.Marshal's two forms and the
// ones it refuses.
var keyFloats = []float64{0, math.Copysign(0, -1), 1, 0.5, 1.5, -2, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789012345678901234.0,
	math.SmallestNonzeroFloat64, math.MaxFloat64, 0.1 + 0.2, math.NaN(), math.Inf(1), math.Inf(-1)}

// keyValues draws values from keyStrings and keyFloats for the random
// values the JSON writers are checked on: one number in refuse may be one
// json.Marshal refuses.
type keyValues struct {
	r      *rand.Rand
	refuse int
}

func (g keyValues) str() string {
	if g.r.IntN(4) == 0 {
		return keyStrings[g.r.IntN(len(keyStrings))] + keyStrings[g.r.IntN(len(keyStrings))]
	}
	return keyStrings[g.r.IntN(len(keyStrings))]
}

func (g keyValues) num() float64 {
	if g.r.IntN(g.refuse) == 0 {
		return keyFloats[g.r.IntN(len(keyFloats))]
	}
	return keyFloats[g.r.IntN(len(keyFloats)-3)] // finite
}

func (g keyValues) ptr() *float64 {
	if g.r.IntN(3) == 0 {
		return nil
	}
	f := g.num()
	return &f
}

// strs is nil, empty or one to three strings.
func (g keyValues) strs() []string {
	switch g.r.IntN(3) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	s := make([]string, 1+g.r.IntN(3))
	for i := range s {
		s[i] = g.str()
	}
	return s
}

func randomTaskDef(r *rand.Rand, kpis []map[string]json.RawMessage, scorings []turnScoring) taskDef {
	g := keyValues{r: r, refuse: 8}
	str, num, strs := g.str, g.num, g.strs
	d := taskDef{Version: inputKeyVersion, Scorer: scorer.ID(str()), Weight: num(), CEL: []celDef{},
		Scoring: scorings[r.IntN(len(scorings))],
		Task: scorer.Task{Label: str(), Persona: str(), Prompt: str(), KPIs: kpis[r.IntN(len(kpis))],
			ToolCatalog: strs(), SliceTags: strs(), Safety: scorer.Safety{RequiresHuman: r.IntN(2) == 0}}}
	if r.IntN(2) == 0 {
		n := r.IntN(7) - 3
		d.Task.Safety.MaxToolCalls = &n
	}
	for range r.IntN(3) {
		d.CEL = append(d.CEL, celDef{Name: str(), Expr: str(), Message: str(), MessageExpr: str(), Weight: num(), FailureTag: str()})
	}
	for range 1 + r.IntN(3) {
		d.Scorers = append(d.Scorers, scorerStub{ID: scorer.ID(str()), Version: str(), SHA256: str()})
	}
	return d
}

// TestAppendTaskDefIsMarshal: appendTaskDef writes json.Marshal's bytes
// for any task definition (the input keys of every recorded turn depend on
// them: docs/verify-engine.md), reports the numbers json.Marshal refuses,
// and its shared KPI encodings (a map by identity) and scoring block are
// those of the definition at hand, not of one written before.
func TestAppendTaskDefIsMarshal(t *testing.T) {
	t.Parallel()
	lat, cost, nan := 30.0, 1e-7, math.NaN()
	kpis := []map[string]json.RawMessage{nil, {}, {"answer_keywords": json.RawMessage(`["release","pass"]`)},
		{"b": json.RawMessage(`1`), "a": json.RawMessage(`{"x":"<&>"}`), "é": json.RawMessage(`null`)},
		{"answer_keywords": json.RawMessage(`["release","pass"]`)}, // equal to the third, another map
		{"bad": json.RawMessage(`{`)}} // json.Marshal refuses it
	scorings := []turnScoring{{ProcessWeight: 0.35, KPIWeight: 0.65}, {ProcessWeight: 0.35, KPIWeight: 0.65, MaxMeanLatencyS: &lat},
		{ProcessWeight: 0.35, KPIWeight: 0.65, MaxMeanLatencyS: &lat, MaxMeanCostUSD: &cost}, {ProcessWeight: 1e21},
		{KPIWeight: 1, MaxMeanCostUSD: &nan}, {ProcessWeight: math.Copysign(0, -1)}, {}}
	r := rand.New(rand.NewPCG(7, 16))
	k := &taskKeyer{}
	var failed, written int
	for i := range 5000 {
		d := randomTaskDef(r, kpis, scorings)
		want, err := json.Marshal(d)
		got, ok := k.appendTaskDef(nil, &d)
		switch {
		case err != nil && ok:
			t.Fatalf("%d: appendTaskDef(%+v) wrote %s; json.Marshal refuses it: %v", i, d, got, err)
		case err == nil && !ok:
			t.Fatalf("%d: appendTaskDef(%+v) refused it; json.Marshal = %s", i, d, want)
		case err == nil && string(got) != string(want):
			t.Fatalf("%d: appendTaskDef(%+v) =\n%s\nwant json.Marshal's\n%s", i, d, got, want)
		case err != nil:
			failed++
		default:
			written++
		}
	}
	if failed < 100 || written < 1000 {
		t.Errorf("%d definitions refused and %d written: the test no longer covers both", failed, written)
	}
}

// FuzzAppendTaskDef: appendTaskDef and json.Marshal agree on any strings
// and numbers.
func FuzzAppendTaskDef(f *testing.F) {
	f.Add("t1", "cto", "Answer.", "finalized", "turn.finalized", "<&>\u2028", 1.0, 0.5)
	f.Add("\xff", "", "\x00", "", "", "", 1e-7, math.Inf(1))
	f.Fuzz(func(t *testing.T, label, persona, prompt, name, expr, tag string, weight, cw float64) {
		n := len(tag)
		d := taskDef{Version: inputKeyVersion, Scorer: scorer.ID(name), Weight: weight,
			Task:    scorer.Task{Label: label, Persona: persona, Prompt: prompt, KPIs: map[string]json.RawMessage{tag: json.RawMessage(`1`)}, ToolCatalog: []string{tag}, Safety: scorer.Safety{MaxToolCalls: &n}},
			CEL:     []celDef{{Name: name, Expr: expr, Message: strings.ToUpper(expr), Weight: cw, FailureTag: tag}},
			Scoring: turnScoring{ProcessWeight: cw, KPIWeight: weight, MaxMeanLatencyS: &cw},
			Scorers: []scorerStub{{ID: scorer.ID(label), Version: persona, SHA256: prompt}}}
		want, err := json.Marshal(d)
		got, ok := (&taskKeyer{}).appendTaskDef(nil, &d)
		if (err == nil) != ok || (ok && string(got) != string(want)) {
			t.Fatalf("appendTaskDef(%+v) = %s, %v; json.Marshal = %s, %v", d, got, ok, want, err)
		}
	})
}

// TestTaskKeysAreMarshal: the keys New gives a pack's tasks, with one
// keyer reused task after task, are the sha256 of json.Marshal of each
// task's definition built on its own (docs/verify-engine.md), for tasks
// with more, fewer and no CEL checks after one another, equal and other KPI
// maps, and a scorer with upstream scorers.
func TestTaskKeysAreMarshal(t *testing.T) {
	t.Parallel()
	kpis := map[string]any{"k": []any{"release", "pass"}}
	five := 5
	cel := func(names ...string) []*pack.CELCheck {
		var cs []*pack.CELCheck
		for _, n := range names {
			cs = append(cs, &pack.CELCheck{Name: n, Expr: "turn.finalized", Message: "m <" + n + ">", Weight: 1, FailureTag: "tag"})
		}
		return cs
	}
	lat := 30.0
	p := &pack.Pack{ToolCatalog: []string{"search"}, Scoring: pack.Scoring{ProcessWeight: 0.35, KPIWeight: 0.65, MaxMeanLatencyS: &lat},
		Tasks: []*pack.Task{
			{Label: "a", Persona: "cto", Prompt: "Say it.", Scorer: "s", Weight: 1, KPIs: kpis, CEL: cel("x", "y", "z")},
			{Label: "b", Scorer: "s", Weight: 2.5, KPIs: kpis, CEL: cel("w")},
			{Label: "c", Scorer: "u", Weight: 1, KPIs: map[string]any{"k": 1.5}, ToolCatalog: []string{"fetch"},
				Safety: pack.Safety{RequiresHuman: true, MaxToolCalls: &five}},
			{Label: "d", Scorer: "s", Weight: 0, SliceTags: []string{"t"}, CEL: cel("v", "x")},
		}}
	descs := map[scorer.ID]scorer.Description{"s": {ID: "s", KPIs: []scorer.KPI{{Key: "k"}}},
		"u": {ID: "u", Needs: []scorer.Need{scorer.NeedUpstream}}}
	ids := map[scorer.ID]ScorerRef{"s": {ID: "s", Version: "1.0.0", SHA256: "ab"}, "u": {ID: "u", Version: "2", SHA256: "cd"}}
	e, err := New(Config{Pack: p, Scorers: constScorer{}, Descriptions: descs, Identities: ids})
	if err != nil {
		t.Fatal(err)
	}
	if ups := e.upstreams["c"]; len(ups) != 1 || ups[0] != "s" {
		t.Fatalf("task c's upstreams = %v, want [s]", ups)
	}
	share := newWireShare(p)
	for _, task := range p.Tasks {
		w, err := share.task(task)
		if err != nil {
			t.Fatal(err)
		}
		d := taskDef{Version: inputKeyVersion, Task: w, Scorer: task.Scorer, Weight: task.Weight, CEL: []celDef{},
			Scoring: turnScoring{ProcessWeight: 0.35, KPIWeight: 0.65, MaxMeanLatencyS: &lat}}
		for _, c := range task.CEL {
			d.CEL = append(d.CEL, celDef{Name: c.Name, Expr: c.Expr, Message: c.Message, MessageExpr: c.MessageExpr,
				Weight: c.Weight, FailureTag: c.FailureTag})
		}
		for _, id := range append([]scorer.ID{task.Scorer}, e.upstreams[task.Label]...) {
			d.Scorers = append(d.Scorers, scorerStub{ID: id, Version: ids[id].Version, SHA256: ids[id].SHA256})
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := hex.EncodeToString(e.tasks[task.Label].key[:]), sha256Hex(b); got != want {
			t.Errorf("task %q: key %s, want %s, the sha256 of\n%s", task.Label, got, want, b)
		}
	}
}
