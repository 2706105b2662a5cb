package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// coinPack has a deterministic task (test_guard) and a nondeterministic
// one (test_coin).
const coinPack = `company: {id: acme, name: Acme}
personas: [cto]
tasks:
  - {label: guarded, persona: cto, prompt: p, scorer: test_guard, kpis: {safe: true}}
  - {label: flipped, persona: cto, prompt: p, scorer: test_coin, kpis: {heads: true}}
scoring: {process_weight: 0.5, kpi_weight: 0.5, min_mean_score: 0, min_finalize_rate: 0, max_error_rate: 1}
`

// TestProbeFlagsNondeterministicPlugin (issue 17 item 5): assay scorers
// probe flags the nondeterministic test plugin and not the deterministic
// one, doctor shows each scorer's last probe, and verify's summary.json
// carries scorer_health; rescore and compare run on the stored evidence
// after the turns file is gone.
func TestProbeFlagsNondeterministicPlugin(t *testing.T) {
	dir := t.TempDir()
	assayIn := privateEnv(t, dir, filepath.Join(dir, "assay.db"), "test_guard", "test_coin")
	pack := filepath.Join(dir, "pack.yaml")
	turns := filepath.Join(dir, "turns.jsonl")
	writeText(t, pack, coinPack)
	writeText(t, turns, strings.Join([]string{
		turnLine("a", "guarded", "ok"), turnLine("a", "flipped", "ok"),
		turnLine("b", "guarded", "ok"), turnLine("b", "flipped", "ok"),
	}, "\n")+"\n")
	if r := assayIn("verify", "--pack", pack, "--turns", turns); r.code > 1 {
		t.Fatalf("verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := os.Remove(turns); err != nil {
		t.Fatal(err)
	}
	r := assayIn("scorers", "probe", "--pack", pack, "--sample", "4", "--repeat", "3", "--seed", "1")
	if r.code != 1 || !strings.Contains(r.stdout, "WARNING: scorer test_coin") || !strings.Contains(r.stdout, "is nondeterministic") ||
		!strings.Contains(r.stdout, "scorer test_guard v0.0.1") || strings.Contains(r.stdout, "WARNING: scorer test_guard") {
		t.Errorf("scorers probe: exit %d, want 1 flagging test_coin only\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = assayIn("doctor")
	if !strings.Contains(r.stdout, "warn  probe  test_coin") || !strings.Contains(r.stdout, "ok    probe  test_guard") {
		t.Errorf("doctor does not show the last probes\n%s%s", r.stdout, r.stderr)
	}
	r = assayIn("rescore", "--pack", pack, "--candidate", "a")
	if r.code != 0 || !strings.Contains(r.stdout, "unchanged:") {
		t.Errorf("rescore with unchanged scorers: exit %d, want 0 saying unchanged\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = assayIn("compare", "a", "b", "--pack", pack)
	if r.code != 0 || !strings.Contains(r.stdout, "guarded") {
		t.Errorf("compare: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	writeText(t, turns, turnLine("c", "guarded", "ok")+"\n")
	out := filepath.Join(dir, "out")
	if r := assayIn("verify", "--pack", pack, "--turns", turns, "--out", out); r.code > 1 ||
		!strings.Contains(r.stdout, "WARNING: scorer test_coin") {
		t.Errorf("verify does not flag test_coin: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var sum struct {
		ScorerHealth []struct{ ID, Status string } `json:"scorer_health"`
	}
	readJSON(t, filepath.Join(out, "summary.json"), &sum)
	got := map[string]string{}
	for _, h := range sum.ScorerHealth {
		got[h.ID] = h.Status
	}
	if got["test_coin"] != "nondeterministic" || got["test_guard"] != "ok" {
		t.Errorf("summary.json scorer_health = %+v, want test_coin nondeterministic, test_guard ok", sum.ScorerHealth)
	}
}
