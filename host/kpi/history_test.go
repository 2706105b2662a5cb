package kpi

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/pack"
)

const killPackHead = `company: {id: acme}
personas: [ops]
tasks:
  - label: t1
    persona: ops
    prompt: do it
    scorer: answer_keywords
scoring: {process_weight: 0.5, kpi_weight: 0.5}
kill_criteria:
`

// TestKillCriteriaCELErrorPositions covers item 3: a kill criterion's CEL
// problems are reported at their line and column when the pack loads.
func TestKillCriteriaCELErrorPositions(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		criterion string
		want      []string
	}{
		"unknown variable": {"  - {name: a, expr: histry.size() > 3}\n", []string{"10:21: kpi.compile"}},
		"unknown field":    {"  - {name: a, expr: \"history.all(r, r.mean_scor > 0.5)\"}\n", []string{"10:39: kpi.compile"}},
		"syntax":           {"  - {name: a, expr: 'history.size() >'}\n", []string{"10:38: kpi.compile"}},
		"not bool":         {"  - {name: a, expr: history.size()}\n", []string{"10:21: kpi.type"}},
		"second line":      {"  - {name: ok, expr: history.size() > 3}\n  - name: b\n    expr: scorers['x'].suspct\n", []string{"12:24: kpi.compile"}},
		"valid":            {"  - {name: a, expr: \"history.exists(r, !r.gates_passed) && scorers.exists(k, scorers[k].suspect)\"}\n", nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := loadCEL(t, NewChecker(), killPackHead+tc.criterion)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(kill_criteria %q) diagnostics (-want +got):\n%s", tc.criterion, diff)
			}
		})
	}
}

// TestKillCriteriaEval evaluates a criterion over history and scorers.
func TestKillCriteriaEval(t *testing.T) {
	t.Parallel()
	p, ds := pack.Parse("p.yaml", []byte(killPackHead+
		"  - {name: drop, expr: \"history.size() >= 2 && history[history.size()-1].mean_score < history[0].mean_score - 0.1\"}\n"+
		"  - {name: suspect, expr: \"scorers.exists(k, scorers[k].suspect) && history[0].failure_tags['x'] == 2\"}\n"), pack.Options{})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	progs, ds := CompileKillCriteria(p)
	if ds.HasErrors() || len(progs) != 2 {
		t.Fatalf("CompileKillCriteria = %d programs, %v", len(progs), ds)
	}
	h := []HistoryRun{{RunID: 1, MeanScore: 0.9, CreatedAt: time.Unix(0, 0), FailureTags: map[string]int{"x": 2}}, {RunID: 2, MeanScore: 0.7}}
	sc := map[string]ScorerReview{"kpi": {Suspect: true, Reviews: 5, OverrideRate: 0.4}}
	for i, want := range []bool{true, true} {
		got, err := progs[i].Eval(h, sc)
		if err != nil || got != want {
			t.Errorf("Eval(%s) = %v, %v; want %v", progs[i].Criterion.Name, got, err, want)
		}
	}
	if got, err := progs[0].Eval(h[:1], nil); err != nil || got {
		t.Errorf("Eval(drop, one run) = %v, %v; want false", got, err)
	}
}
