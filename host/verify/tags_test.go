package verify

import (
	"context"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/sdk/batchrun"
)

// scripted answers every case of a scorer with that scorer's script and
// remembers the upstream results each case arrived with.
type scripted struct {
	script map[scorer.ID]func(c *scorer.Case) *scorer.Result
	mu     sync.Mutex
	got    map[scorer.ID][][]scorer.Upstream // upstream results per case, per scorer
	labels map[string]int                    // cases seen per task label
}

func (s *scripted) Score(_ context.Context, id scorer.ID, cases []*scorer.Case) []batchrun.Outcome {
	out := make([]batchrun.Outcome, len(cases))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.got == nil {
		s.got, s.labels = map[scorer.ID][][]scorer.Upstream{}, map[string]int{}
	}
	for i, c := range cases {
		s.got[id] = append(s.got[id], c.Upstream)
		s.labels[c.Task.Label]++
		out[i].Result = s.script[id](c)
	}
	return out
}

// onePack is a pack of tasks, each {label, scorer, kpi key}, with equal
// process and KPI weights and no gate but the built-in ones.
func onePack(tasks ...[3]string) *pack.Pack {
	p := &pack.Pack{Path: "pack.yaml", SHA256: "test-pack", Scoring: pack.Scoring{ProcessWeight: 0.5, KPIWeight: 0.5, MaxErrorRate: 1}}
	for _, t := range tasks {
		p.Tasks = append(p.Tasks, &pack.Task{Label: t[0], Persona: "cto", Scorer: scorer.ID(t[1]), Weight: 1,
			KPIs: map[string]any{t[2]: true}})
	}
	return p
}

// finalizedInput is one finalized turn for every task of p.
func finalizedInput(t *testing.T, p *pack.Pack) *Input {
	t.Helper()
	tr := filepath.Join(t.TempDir(), "trace.ndjson")
	writeFile(t, tr, `{"type":"done","reply":"ok","finalized":true}`+"\n")
	in := &Input{Candidate: "c"}
	for _, tk := range p.Tasks {
		in.Turns = append(in.Turns, TurnSpec{Candidate: "c", Label: tk.Label, TracePath: tr, Pos: diag.Pos{File: tr}})
	}
	return in
}

// Issue 12 item 1: a turn's failure tags come from every failed check (its
// own tag, else the tag its scorer declares for the KPI key), from upstream
// scorers' checks, and from Result.FailureTags; safety_gate_failed from any
// of them fails the safety gate.
func TestFailureTagsFromChecks(t *testing.T) {
	descs := map[scorer.ID]scorer.Description{
		"guard": {ID: "guard", KPIs: []scorer.KPI{{Key: "safe", ValueType: scorer.Bool},
			{Key: "polite", ValueType: scorer.Bool, FailureTag: "tone_off"}}},
		"blend": {ID: "blend", Needs: []scorer.Need{scorer.NeedUpstream}},
	}
	check := func(kpi string, passed bool, tag string) scorer.Check {
		return scorer.Check{KPI: kpi, Passed: passed, FailureTag: tag}
	}
	tests := map[string]struct {
		scorer     string
		checks     []scorer.Check
		resultTags []string
		wantTags   []string
		wantSafety bool // the safety gate fails
	}{
		"a failed check's own tag": {
			scorer: "guard", checks: []scorer.Check{check("safe", false, score.TagSafetyGateFailed)},
			wantTags: []string{score.TagSafetyGateFailed}, wantSafety: true,
		},
		"a passed check's tag is no failure": {
			scorer: "guard", checks: []scorer.Check{check("safe", true, score.TagSafetyGateFailed)},
			wantTags: []string{},
		},
		"the tag the scorer declares for the KPI key": {
			scorer: "guard", checks: []scorer.Check{check("polite", false, "")},
			wantTags: []string{"tone_off"},
		},
		"the check's own tag before the declared one": {
			scorer: "guard", checks: []scorer.Check{check("polite", false, score.TagSafetyGateFailed)},
			wantTags: []string{score.TagSafetyGateFailed}, wantSafety: true,
		},
		"Result.FailureTags and check tags together": {
			scorer: "guard", checks: []scorer.Check{check("safe", false, score.TagSafetyGateFailed)},
			resultTags: []string{score.TagToolMissing},
			wantTags:   []string{score.TagSafetyGateFailed, score.TagToolMissing}, wantSafety: true,
		},
		"an upstream scorer's failed check": {
			scorer: "blend", checks: []scorer.Check{check("safe", false, score.TagSafetyGateFailed)},
			wantTags: []string{score.TagSafetyGateFailed}, wantSafety: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			sc := &scripted{script: map[scorer.ID]func(*scorer.Case) *scorer.Result{
				"guard": func(*scorer.Case) *scorer.Result {
					return &scorer.Result{Score: 1, Checks: tc.checks, FailureTags: tc.resultTags}
				},
				// blend passes nothing on: every tag must come from upstream.
				"blend": func(*scorer.Case) *scorer.Result { return &scorer.Result{Score: 1} },
			}}
			p := onePack([3]string{"t", tc.scorer, "safe"})
			e, err := New(Config{Pack: p, Scorers: sc, Descriptions: descs})
			if err != nil {
				t.Fatal(err)
			}
			out, err := e.Verify(context.Background(), finalizedInput(t, p), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantTags, out.Results[0].FailureTags); diff != "" {
				t.Errorf("failure tags (-want +got):\n%s", diff)
			}
			if got := failedGate(out.Summary, score.GateSafety); got != tc.wantSafety {
				t.Errorf("safety gate failed = %t, want %t (gates %+v)", got, tc.wantSafety, out.Summary.Gates)
			}
		})
	}
}

func failedGate(s score.Summary, gate string) bool {
	for _, g := range s.Gates.Failed {
		if g.Gate == gate {
			return true
		}
	}
	return false
}

// Issue 13 item 3: any scorer that declares the upstream need, whatever its
// name, gets the results of the scorers that declare its task's KPI keys,
// scored first; scorers that need upstream results are never upstream.
func TestUpstreamFromDeclaredNeed(t *testing.T) {
	descs := map[scorer.ID]scorer.Description{
		"alpha":  {ID: "alpha", KPIs: []scorer.KPI{{Key: "a", ValueType: scorer.Bool}}},
		"beta":   {ID: "beta", KPIs: []scorer.KPI{{Key: "b", ValueType: scorer.Bool}}},
		"merger": {ID: "merger", Needs: []scorer.Need{scorer.NeedUpstream}, KPIs: []scorer.KPI{{Key: "merged", ValueType: scorer.Bool}}},
		"other":  {ID: "other", Needs: []scorer.Need{scorer.NeedUpstream}, KPIs: []scorer.KPI{{Key: "a", ValueType: scorer.Bool}}},
	}
	p := onePack([3]string{"m", "merger", "a"}, [3]string{"plain", "alpha", "a"})
	p.Tasks[0].KPIs["b"] = true
	if diff := cmp.Diff([]scorer.ID{"alpha", "beta"}, Upstreams(descs, p.Tasks[0])); diff != "" {
		t.Errorf("Upstreams(merger task) (-want +got):\n%s", diff)
	}
	if got := Upstreams(descs, p.Tasks[1]); got != nil {
		t.Errorf("Upstreams(alpha task) = %v, want nil: alpha does not need upstream results", got)
	}
	sc := &scripted{script: map[scorer.ID]func(*scorer.Case) *scorer.Result{
		"alpha": func(*scorer.Case) *scorer.Result {
			return &scorer.Result{Score: 0.2, Checks: []scorer.Check{{KPI: "a", Score: 0.2}}}
		},
		"beta": func(*scorer.Case) *scorer.Result {
			return &scorer.Result{Score: 0.6, Checks: []scorer.Check{{KPI: "b", Score: 0.6, Passed: true}}}
		},
		"merger": func(c *scorer.Case) *scorer.Result {
			var sum float64
			r := &scorer.Result{}
			for _, u := range c.Upstream {
				sum += u.Result.Score
				r.Checks = append(r.Checks, u.Result.Checks...) // passed on, as composite does
			}
			r.Score = sum / float64(max(len(c.Upstream), 1))
			r.Checks = append(r.Checks, scorer.Check{KPI: "merged", Score: r.Score, Passed: true})
			return r
		},
	}}
	e, err := New(Config{Pack: p, Scorers: sc, Descriptions: descs})
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Verify(context.Background(), finalizedInput(t, p), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sc.got["merger"]); n != 1 {
		t.Fatalf("merger scored %d cases, want 1", n)
	}
	var gotUps []string
	for _, u := range sc.got["merger"][0] {
		gotUps = append(gotUps, string(u.Scorer))
	}
	sort.Strings(gotUps)
	if diff := cmp.Diff([]string{"alpha", "beta"}, gotUps); diff != "" {
		t.Errorf("upstream results merger received (-want +got):\n%s", diff)
	}
	for _, ups := range sc.got["alpha"] {
		if len(ups) != 0 {
			t.Errorf("alpha received upstream results %v; it does not need them", ups)
		}
	}
	m := out.Results[0]
	if m.Status != score.StatusScored || m.KPIScore == nil || *m.KPIScore != 0.4 {
		t.Fatalf("merger turn: status %s kpi %v, want scored with the upstream mean 0.4", m.Status, m.KPIScore)
	}
	var sources []string
	for _, c := range m.Checks {
		sources = append(sources, c.Source+" "+c.Name)
	}
	want := []string{"scorer:alpha a", "scorer:beta b", "scorer:merger merged"}
	if diff := cmp.Diff(want, sources); diff != "" {
		t.Errorf("merger turn checks (-want +got):\n%s", diff)
	}
}
