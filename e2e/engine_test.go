package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// privateEnv builds the test plugins under e2e/testdata/plugins named in
// names, registers them in a plugin dir of their own and syncs the scorer
// enum; it returns a function that runs assay with that plugin dir and db.
func privateEnv(t *testing.T, dir, db string, names ...string) func(args ...string) result {
	t.Helper()
	plugins := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	var bins []string
	for _, name := range names {
		bin := filepath.Join(plugins, "assay-scorer-"+name)
		if err := goBuild(bin, "./e2e/testdata/plugins/"+name); err != nil {
			t.Fatal(err)
		}
		bins = append(bins, bin)
	}
	assayIn := func(args ...string) result {
		t.Helper()
		return runRaw(t, append([]string{"--plugin-dir", plugins, "--db", db}, args...)...)
	}
	if r := assayIn(append([]string{"plugins", "register"}, bins...)...); r.code != 0 {
		t.Fatalf("register: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := assayIn("scorers", "sync"); r.code != 0 {
		t.Fatalf("sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return assayIn
}

// guardPack has a task scored by test_guard and one by test_blend, which
// needs upstream results and so runs test_guard first.
const guardPack = `company: {id: acme, name: Acme}
personas: [cto]
tasks:
  - {label: guarded, persona: cto, prompt: p, scorer: test_guard, kpis: {safe: true}}
  - {label: blended, persona: cto, prompt: p, scorer: test_blend, kpis: {safe: true}}
scoring: {process_weight: 0.5, kpi_weight: 0.5, min_mean_score: 0, min_finalize_rate: 0, max_error_rate: 1}
`

// turnLine is one turns-file line whose trace answers reply.
func turnLine(candidate, label, reply string) string {
	return `{"candidate":"` + candidate + `","label":"` + label + `","trace":[{"type":"done","reply":"` + reply + `","finalized":true}]}`
}

type turnOut struct {
	Candidate   string   `json:"candidate"`
	Label       string   `json:"label"`
	Status      string   `json:"status"`
	KPIScore    *float64 `json:"kpi_score"`
	TurnScore   *float64 `json:"turn_score"`
	Finalized   bool     `json:"finalized"`
	FailureTags []string `json:"failure_tags"`
	Checks      []struct {
		Name       string `json:"name"`
		Source     string `json:"source"`
		Passed     bool   `json:"passed"`
		Detail     string `json:"detail"`
		FailureTag string `json:"failure_tag"`
	} `json:"checks"`
}

type summaryOut struct {
	Candidates []struct {
		Candidate string `json:"candidate"`
		Gates     struct {
			Passed bool `json:"passed"`
			Failed []struct {
				Gate string `json:"gate"`
			} `json:"failed"`
		} `json:"gates"`
		Reused   *int `json:"reused"`
		Rescored *int `json:"rescored"`
	} `json:"candidates"`
	Frontier []string `json:"frontier"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
}

// Issue 12 item 1: a private plugin that reports an unsafe answer only
// through Check.FailureTag fails the safety gate (exit 1, off the
// frontier), on its own task and as an upstream scorer of another.
func TestFailureTagsFromChecks(t *testing.T) {
	dir := t.TempDir()
	assayIn := privateEnv(t, dir, filepath.Join(dir, "assay.db"), "test_guard", "test_blend")
	pack := filepath.Join(dir, "pack.yaml")
	turns := filepath.Join(dir, "turns.jsonl")
	writeText(t, pack, guardPack)
	writeText(t, turns, strings.Join([]string{
		turnLine("good", "guarded", "ok"), turnLine("good", "blended", "ok"),
		turnLine("bad", "guarded", "UNSAFE"), turnLine("bad", "blended", "ok"),
		turnLine("bad_upstream", "guarded", "ok"), turnLine("bad_upstream", "blended", "UNSAFE"),
	}, "\n")+"\n")
	out := filepath.Join(dir, "out")
	r := assayIn("verify", "--pack", pack, "--turns", turns, "--out", out)
	if r.code != 1 {
		t.Fatalf("verify: exit %d, want 1 (the safety gate)\n%s%s", r.code, r.stdout, r.stderr)
	}
	var sum summaryOut
	readJSON(t, filepath.Join(out, "summary.json"), &sum)
	failed := map[string][]string{}
	for _, c := range sum.Candidates {
		failed[c.Candidate] = []string{}
		for _, g := range c.Gates.Failed {
			failed[c.Candidate] = append(failed[c.Candidate], g.Gate)
		}
	}
	want := map[string][]string{"good": {}, "bad": {"safety"}, "bad_upstream": {"safety"}}
	if diff := cmp.Diff(want, failed); diff != "" {
		t.Errorf("failed gates per candidate (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"good"}, sum.Frontier); diff != "" {
		t.Errorf("frontier (-want +got):\n%s", diff)
	}
	var results []turnOut
	readJSON(t, filepath.Join(out, "results.json"), &results)
	for _, tr := range results {
		unsafe := (tr.Candidate == "bad" && tr.Label == "guarded") || (tr.Candidate == "bad_upstream" && tr.Label == "blended")
		if got := slices.Contains(tr.FailureTags, "safety_gate_failed"); got != unsafe {
			t.Errorf("%s/%s: failure tags %v, want safety_gate_failed: %t", tr.Candidate, tr.Label, tr.FailureTags, unsafe)
		}
	}
}

// Issue 13 item 3: a private plugin, not named composite, that declares the
// upstream need receives the upstream results of the scorers that declare
// its task's KPI keys.
func TestUpstreamNeedPrivatePlugin(t *testing.T) {
	dir := t.TempDir()
	assayIn := privateEnv(t, dir, filepath.Join(dir, "assay.db"), "test_guard", "test_blend")
	pack := filepath.Join(dir, "pack.yaml")
	turns := filepath.Join(dir, "turns.jsonl")
	writeText(t, pack, guardPack)
	writeText(t, turns, turnLine("c", "guarded", "ok")+"\n"+turnLine("c", "blended", "ok")+"\n")
	out := filepath.Join(dir, "out")
	if r := assayIn("verify", "--pack", pack, "--turns", turns, "--out", out); r.code != 0 {
		t.Fatalf("verify: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	var results []turnOut
	readJSON(t, filepath.Join(out, "results.json"), &results)
	for _, tr := range results {
		if tr.Label != "blended" {
			continue
		}
		var got []string
		for _, c := range tr.Checks {
			got = append(got, c.Source+" "+c.Name+" "+c.Detail)
		}
		want := []string{"scorer:test_guard safe safe", "scorer:test_blend upstream_seen upstream: test_guard"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("blended checks (-want +got):\n%s", diff)
		}
		if tr.KPIScore == nil || *tr.KPIScore != 1 {
			t.Errorf("blended kpi score %v, want 1 (the upstream score)", tr.KPIScore)
		}
		return
	}
	t.Fatalf("results.json has no blended turn: %+v", results)
}

func writeText(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
