package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/host/store"
)

// copyDir copies the example run src to dir/name with a run.json.
func copyExampleRun(t *testing.T, src, name, runJSON string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err == nil {
		err = os.WriteFile(filepath.Join(dst, "run.json"), []byte(runJSON), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func wantLines(t *testing.T, what, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(out, l) {
			t.Errorf("%s output = %s\nwant it to contain %q", what, out, l)
		}
	}
}

// TestDriftBanners (issue 17 item 4): verify --baseline, compare and
// frontier name every drift unit that differs with its two values, in text
// and JSON, and the frontier keeps such runs apart.
func TestDriftBanners(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	pack := "../../packs/example.yaml"
	a := copyExampleRun(t, "../../examples/runs/candidate-a", "candidate-a", `{"policy_version": "p1", "skill_version": "s1"}`)
	b := copyExampleRun(t, "../../examples/runs/candidate-b", "candidate-b", `{"policy_version": "p1", "skill_version": "s1"}`)
	if code, out, errOut := evalRun(t, "--db", db, "verify", "--pack", pack, "--in-process", "--run", a); code > 1 {
		t.Fatalf("verify candidate-a = %d\n%s\n%s", code, out, errOut)
	}
	_, out, _ := evalRun(t, "--db", db, "verify", "--pack", pack, "--in-process", "--run", b, "--baseline", "candidate-a",
		"--policy-version", "p2", "--skill-version", "s2")
	wantLines(t, "verify --baseline", out, "drift: policy_version p1 -> p2", "drift: skill_version s1 -> s2")

	_, out, _ = evalRun(t, "--db", db, "compare", "candidate-a", "candidate-b", "--pack", pack)
	wantLines(t, "compare", out, "drift: policy_version p1 -> p2", "drift: skill_version s1 -> s2", "TASK", "better", "worse")
	_, out, _ = evalRun(t, "--db", db, "compare", "candidate-a", "candidate-b", "--pack", pack, "--format", "json")
	var cmp struct{ Drift []map[string]string }
	if err := json.Unmarshal([]byte(out), &cmp); err != nil || len(cmp.Drift) != 2 || cmp.Drift[0]["unit"] != "policy_version" ||
		cmp.Drift[0]["from"] != "p1" || cmp.Drift[0]["to"] != "p2" {
		t.Errorf("compare --format json drift = %v (%v), want policy_version p1 -> p2 and skill_version", cmp.Drift, err)
	}

	// The frontier's scorers are the manifest's, not the in-process ones:
	// record both runs as its scorer version.
	_, out, _ = evalRun(t, "--db", db, "frontier", "--pack", pack, "--format", "json")
	var fr struct {
		ScorerVersion string `json:"scorer_version"`
	}
	if err := json.Unmarshal([]byte(out), &fr); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().ExecContext(ctx, `UPDATE company_eval_runs SET scorer_version = ?, units = '{}'`, fr.ScorerVersion); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().ExecContext(ctx, `UPDATE company_eval_runs SET units = ? WHERE candidate = ?`, `{"policy_version":"p1","skill_version":"s1"}`, "candidate-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().ExecContext(ctx, `UPDATE company_eval_runs SET units = ?, updated_at = ? WHERE candidate = ?`,
		`{"policy_version":"p2","skill_version":"s2"}`, time.Now().Add(time.Hour), "candidate-b"); err != nil {
		t.Fatal(err)
	}
	// candidate-b is the latest run: candidate-a's harness differs, so it is kept apart.
	_, out, _ = evalRun(t, "--db", db, "frontier", "--pack", pack)
	wantLines(t, "frontier", out, "another policy or skill version", "candidate-a (run", "drift: policy_version p2 -> p1", "drift: skill_version s2 -> s1")

	// A run recorded by another build of task_state.
	units := `{"pack_sha256":"x","scorer_version":"old","scorers":[{"id":"task_state","version":"0.9.0","sha256":"19e2ffff"}]}`
	if _, err := st.DB().ExecContext(ctx, `UPDATE company_eval_runs SET scorer_version = 'old', units = ? WHERE candidate = 'candidate-a'`, units); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, out, _ = evalRun(t, "--db", db, "frontier", "--pack", pack)
	wantLines(t, "frontier", out, "scored by other scorer versions", "drift: scorer task_state ", " -> 0.9.0 (sha 19e2…)")
	_, out, _ = evalRun(t, "--db", db, "frontier", "--pack", pack, "--format", "json")
	wantLines(t, "frontier --format json", out, `"unit": "scorer task_state"`, `"to": "0.9.0 (sha 19e2…)"`)
}
