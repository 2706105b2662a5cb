package e2e

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// runVerdict is the part of a candidate's verdict these tests read.
type runVerdict struct {
	Verdict string   `json:"verdict"`
	Score   float64  `json:"score"`
	Reasons []string `json:"reasons"`
}

type verdictSummary struct {
	Candidates []struct {
		Candidate string     `json:"candidate"`
		MeanScore float64    `json:"mean_score"`
		Reused    *int       `json:"reused"`
		Rescored  *int       `json:"rescored"`
		Gates     gates      `json:"gates"`
		Verdict   runVerdict `json:"verdict"`
	} `json:"candidates"`
	Errors []struct {
		Candidate string `json:"candidate"`
		Input     string `json:"input"`
		Error     string `json:"error"`
	} `json:"errors"`
	ScorerFailures []struct {
		Candidate string `json:"candidate"`
		Scorer    string `json:"scorer"`
		Failed    int    `json:"failed"`
		Turns     int    `json:"turns"`
	} `json:"scorer_failures"`
}

func readVerdictSummary(t *testing.T, out string) verdictSummary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s verdictSummary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOneVerdictVocabulary (issue 12 item 3): on the bundled examples each
// candidate's verdict agrees with its gates and its score is its mean score:
// a PASS, b (three gates failed) FAIL, c (gates passed, some checks failed)
// PASS_WITH_WARNINGS, each reason listed in summary.json and the text.
func TestOneVerdictVocabulary(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	r := run(t, filepath.Join(dir, "assay.db"), "verify", "--pack", "packs/example.yaml",
		"--run", "examples/runs/candidate-a", "--run", "examples/runs/candidate-b", "--run", "examples/runs/candidate-c",
		"--out", out)
	if r.code != 1 {
		t.Fatalf("verify exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := map[string]string{"candidate-a": "PASS", "candidate-b": "FAIL", "candidate-c": "PASS_WITH_WARNINGS"}
	for _, c := range readVerdictSummary(t, out).Candidates {
		v := c.Verdict
		if v.Verdict != want[c.Candidate] || v.Score != c.MeanScore {
			t.Errorf("%s: verdict %s score %v, want %s and the mean score %v", c.Candidate, v.Verdict, v.Score, want[c.Candidate], c.MeanScore)
		}
		if c.Gates.Passed == (v.Verdict == "FAIL" || v.Verdict == "BLOCKED") {
			t.Errorf("%s: verdict %s under gates passed %t", c.Candidate, v.Verdict, c.Gates.Passed)
		}
		if (v.Verdict == "PASS") != (len(v.Reasons) == 0) {
			t.Errorf("%s: verdict %s with reasons %q", c.Candidate, v.Verdict, v.Reasons)
		}
		if c.Reused == nil || c.Rescored == nil {
			t.Errorf("%s: summary lacks reused or rescored", c.Candidate)
		}
		for _, reason := range v.Reasons {
			if !strings.Contains(r.stdout, "    "+reason+"\n") {
				t.Errorf("%s: reason %q not in the text output", c.Candidate, reason)
			}
		}
	}
	if !strings.Contains(r.stdout, "verdict: PASS_WITH_WARNINGS (score 0.867") || !strings.Contains(r.stdout, "3 of 12 checks failed") {
		t.Errorf("candidate-c text verdict:\n%s", r.stdout)
	}
}

// TestBrokenCandidateExit2 (issue 12 item 8): one candidate with a broken
// results.json does not stop the others: they are verified, summary.json
// lists the broken one with its error, and the exit code is 2.
func TestBrokenCandidateExit2(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "candidate-x")
	for _, sub := range []string{"results", "state"} {
		os.MkdirAll(filepath.Join(broken, sub), 0o755)
		entries, _ := os.ReadDir(filepath.Join(root, "examples/runs/candidate-a", sub))
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(root, "examples/runs/candidate-a", sub, e.Name()))
			os.WriteFile(filepath.Join(broken, sub, e.Name()), b, 0o644)
		}
	}
	os.WriteFile(filepath.Join(broken, "results.json"), []byte("[\n  {\"label\": oops}\n]\n"), 0o644)
	out := filepath.Join(dir, "out")
	r := run(t, filepath.Join(dir, "assay.db"), "verify", "--pack", "packs/example.yaml",
		"--run", broken, "--run", "examples/runs/candidate-a", "--out", out)
	if r.code != 2 || !strings.Contains(r.stderr, filepath.Join(broken, "results.json")+":2:") {
		t.Fatalf("verify exit %d, want 2 with the broken file's position\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "candidate candidate-a") {
		t.Errorf("candidate-a was not verified:\n%s", r.stdout)
	}
	s := readVerdictSummary(t, out)
	if len(s.Candidates) != 1 || s.Candidates[0].Candidate != "candidate-a" {
		t.Errorf("summary candidates %+v, want candidate-a", s.Candidates)
	}
	if len(s.Errors) != 1 || s.Errors[0].Candidate != "candidate-x" || s.Errors[0].Input != broken || !strings.Contains(s.Errors[0].Error, "results.json") {
		t.Errorf("summary errors %+v, want candidate-x with its results.json error", s.Errors)
	}
}

// TestScorerCannotRunExit3 (issue 12 item 5): a scorer that produces no
// result for any of its turns is the host failing to run, exit 3, and the
// summary names the scorer; a scorer failing on one turn of two leaves that
// turn unscored, its candidate's verdict FAIL with the reason (exit 1).
func TestScorerCannotRunExit3(t *testing.T) {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	os.MkdirAll(plugins, 0o755)
	bin := filepath.Join(plugins, "assay-scorer-test_exit")
	if err := goBuild(bin, "./host/pluginhost/testdata/plugins/test_exit"); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "assay.db")
	assayIn := func(args ...string) result {
		t.Helper()
		return runRaw(t, append([]string{"--plugin-dir", plugins, "--db", db}, args...)...)
	}
	if r := assayIn("plugins", "register", bin); r.code != 0 {
		t.Fatalf("register: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := assayIn("scorers", "sync"); r.code != 0 {
		t.Fatalf("sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	write := func(name string, labels ...string) (pack, turns string) {
		pack = filepath.Join(dir, name+".yaml")
		turns = filepath.Join(dir, name+".jsonl")
		var tasks, lines []string
		for _, l := range labels {
			tasks = append(tasks, "  - {label: "+l+", persona: cto, prompt: p, scorer: test_exit, kpis: {label_seen: true}}")
			lines = append(lines, `{"label":"`+l+`","trace":[{"type":"done","reply":"ok","finalized":true}]}`)
		}
		os.WriteFile(pack, []byte("company: {id: acme, name: Acme}\npersonas: [cto]\ntasks:\n"+strings.Join(tasks, "\n")+
			"\nscoring: {process_weight: 0.5, kpi_weight: 0.5, min_mean_score: 0.1, min_finalize_rate: 0, max_error_rate: 1}\n"), 0o644)
		os.WriteFile(turns, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		return pack, turns
	}

	pack, turns := write("all", "exit")
	out := filepath.Join(dir, "out-all")
	r := assayIn("verify", "--pack", pack, "--turns", turns, "--candidate", "c", "--out", out)
	if r.code != 3 || !strings.Contains(r.stderr, "scorer test_exit produced no result for 1 of 1 turns") {
		t.Fatalf("every call fails: exit %d, want 3 naming test_exit\n%s%s", r.code, r.stdout, r.stderr)
	}
	s := readVerdictSummary(t, out)
	if len(s.ScorerFailures) != 1 || s.ScorerFailures[0].Scorer != "test_exit" || s.ScorerFailures[0].Failed != 1 {
		t.Errorf("summary scorer_failures %+v, want test_exit 1 of 1", s.ScorerFailures)
	}

	pack, turns = write("half", "exit", "calm")
	out = filepath.Join(dir, "out-half")
	r = assayIn("verify", "--pack", pack, "--turns", turns, "--candidate", "c", "--out", out)
	if r.code != 1 {
		t.Fatalf("one turn of two fails: exit %d, want 1 (the unscored gate)\n%s%s", r.code, r.stdout, r.stderr)
	}
	s = readVerdictSummary(t, out)
	if diff := cmp.Diff([]string{"gate unscored failed: 1.000 against threshold 0.000", "1 turn unscored"},
		s.Candidates[0].Verdict.Reasons); diff != "" || s.Candidates[0].Verdict.Verdict != "FAIL" {
		t.Errorf("verdict %s, reasons (-want +got):\n%s", s.Candidates[0].Verdict.Verdict, diff)
	}
	// With a share below one half, the same run is a host failure.
	if r := assayIn("verify", "--pack", pack, "--turns", turns, "--candidate", "c", "--fresh", "--scorer-error-share", "0.4"); r.code != 3 {
		t.Errorf("--scorer-error-share 0.4: exit %d, want 3\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestConsistentNumbers (issue 12 item 10): summary.json and results.json
// carry every number at full precision; the text output prints 3 decimals.
func TestConsistentNumbers(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	r := run(t, filepath.Join(dir, "assay.db"), "verify", "--pack", "packs/example.yaml",
		"--run", "examples/runs/candidate-c", "--out", out)
	if r.code != 0 {
		t.Fatalf("verify exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	c := readVerdictSummary(t, out).Candidates[0]
	want := (1.25*(0.35+0.65*0.6) + (0.35 + 0.65*5.0/6) + 1) / 3.25
	if math.Abs(c.MeanScore-want) > 1e-12 || c.MeanScore == math.Round(c.MeanScore*1e9)/1e9 {
		t.Errorf("summary.json mean_score = %v, want %v at full precision", c.MeanScore, want)
	}
	if !strings.Contains(r.stdout, "mean score 0.867  finalize 1.000") || !strings.Contains(r.stdout, "0.892") {
		t.Errorf("text output is not at 3 decimals:\n%s", r.stdout)
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"turn_score": 0.8916666666666`) {
		t.Errorf("results.json turn_score of memory_grounded_recent_work is not at full precision:\n%s", b)
	}
}
