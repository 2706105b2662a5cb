package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyWarnsAboutMissingAndMisnamedTraces covers issue 12 item 8 as a
// user sees it: a trace file renamed by mistake leaves a task results.json
// lists without a trace and a trace named for no task; both are warnings
// on stderr with the path and the nearest label.
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
}
