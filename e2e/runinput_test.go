package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyWarnsAboutMissingAndMisnamedTraces covers issue 12 item 8 as a
// user sees it: a trace file renamed by mistake leaves a task results.json
// lists without a trace and a trace named for no task; both are warnings
// on stderr with the path and the nearest label. The ignored turn is in the
// report too, text and JSON (never only on stderr): the candidate's
// ignored_labels, a reason of its verdict, and the run's input_warnings.
func TestVerifyWarnsAboutMissingAndMisnamedTraces(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cand")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "examples", "runs", "candidate-a"))); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results")
	misnamed := filepath.Join(results, "memory-grounded-recent-work.ndjson")
	if err := os.Rename(filepath.Join(results, "memory_grounded_recent_work.ndjson"), misnamed); err != nil {
		t.Fatal(err)
	}
	r := run(t, filepath.Join(t.TempDir(), "assay.db"), "verify", "--pack", "packs/example.yaml", "--run", dir)
	for _, want := range []string{
		filepath.Join(dir, "results.json") + ":", // positioned at the row
		`warning: run.missing_trace: results.json lists turn "memory_grounded_recent_work", but its trace ` +
			filepath.Join(results, "memory_grounded_recent_work.ndjson") + ` does not exist; the turn is not scored; did you mean "memory-grounded-recent-work"`,
		misnamed + `: warning: run.unknown_label: candidate cand: turn "memory-grounded-recent-work" is not a task of pack`,
		`ignored; did you mean "memory_grounded_recent_work"?`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("verify (one trace misnamed) stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if want := "  ignored (not a task of the pack; neither scored nor recorded): memory-grounded-recent-work\n"; !strings.Contains(r.stdout, want) {
		t.Errorf("verify text output lacks %q:\n%s", want, r.stdout)
	}
	if want := "warning: the input had 2 warnings"; !strings.Contains(r.stdout, want) {
		t.Errorf("verify text output lacks %q:\n%s", want, r.stdout)
	}

	out := filepath.Join(t.TempDir(), "out")
	r = run(t, filepath.Join(t.TempDir(), "assay.db"), "verify", "--pack", "packs/example.yaml", "--run", dir, "--format", "json", "--out", out)
	mustValidate(t, schemaFor(t, "summary.v1.json"), "--format json", []byte(r.stdout))
	summary, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	for what, b := range map[string][]byte{"--format json": []byte(r.stdout), "summary.json": summary} {
		var rep struct {
			Candidates []struct {
				Ignored       int      `json:"ignored"`
				IgnoredLabels []string `json:"ignored_labels"`
				Verdict       struct {
					Verdict string   `json:"verdict"`
					Reasons []string `json:"reasons"`
				} `json:"verdict"`
			} `json:"candidates"`
			InputWarnings []struct {
				Pos struct {
					File string `json:"file"`
				} `json:"pos"`
				Code string `json:"code"`
			} `json:"input_warnings"`
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(rep.Candidates) != 1 {
			t.Fatalf("%s: %d candidates, want 1", what, len(rep.Candidates))
		}
		c := rep.Candidates[0]
		if c.Ignored != 1 || len(c.IgnoredLabels) != 1 || c.IgnoredLabels[0] != "memory-grounded-recent-work" {
			t.Errorf("%s: ignored %d %q, want 1 [memory-grounded-recent-work]", what, c.Ignored, c.IgnoredLabels)
		}
		if want := "1 turn ignored: not a task of the pack (memory-grounded-recent-work)"; c.Verdict.Verdict != "PASS_WITH_WARNINGS" && c.Verdict.Verdict != "FAIL" ||
			!strings.Contains(strings.Join(c.Verdict.Reasons, "\n"), want) {
			t.Errorf("%s: verdict %s %q, want a reason %q", what, c.Verdict.Verdict, c.Verdict.Reasons, want)
		}
		var codes []string
		for _, w := range rep.InputWarnings {
			codes = append(codes, w.Code)
			if w.Pos.File == "" {
				t.Errorf("%s: input warning %s has no file", what, w.Code)
			}
		}
		if got := strings.Join(codes, " "); got != "run.missing_trace run.unknown_label" {
			t.Errorf("%s: input_warnings codes %q, want run.missing_trace run.unknown_label", what, got)
		}
	}
}
