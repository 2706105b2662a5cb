package e2e

import (
	"bytes"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

// TestVerifyResumesAfterKill kills assay verify in the middle of a run and
// runs it again: every turn ends up recorded exactly once.
func TestVerifyResumesAfterKill(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		dbPath := filepath.Join(dir, "assay.db")
		testResume(t, dir, dbPath, func() (*sql.DB, error) { return sql.Open("sqlite", dbPath) })
	})
	t.Run("postgres", func(t *testing.T) {
		base := os.Getenv("ASSAY_TEST_POSTGRES_URL")
		if base == "" {
			t.Skip("ASSAY_TEST_POSTGRES_URL is not set; skipping the Postgres resume test")
		}
		dsn := pgSchema(t, base)
		testResume(t, t.TempDir(), dsn, func() (*sql.DB, error) { return sql.Open("pgx", dsn) })
	})
}

// pgSchema creates a uniquely named schema and returns a URL that uses it.
func pgSchema(t testing.TB, base string) string {
	t.Helper()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	schema := fmt.Sprintf("assay_e2e_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("creating schema: %v", err)
	}
	t.Cleanup(func() { admin.Exec("DROP SCHEMA " + schema + " CASCADE") })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func testResume(t *testing.T, dir, db string, open func() (*sql.DB, error)) {
	const tasks = 3000
	w := makeWorkload(t, dir, tasks, 1, 120)
	args := []string{"--plugin-dir", pluginDir, "--db", db, "verify", "--pack", w.Pack, "--turns", w.Turns,
		"--out", filepath.Join(dir, "out")}

	cmd := exec.Command(assay, args...)
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	count := func() int {
		var n int
		if err := conn.QueryRow("SELECT count(*) FROM company_eval_turns").Scan(&n); err != nil {
			return -1
		}
		return n
	}
	killedAt := -1
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if n := count(); n > 0 && n < tasks {
			cmd.Process.Signal(syscall.SIGKILL)
			killedAt = n
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	cmd.Wait()
	if killedAt < 0 {
		t.Fatalf("verify was not caught mid-run (rows %d); stderr:\n%s", count(), se.String())
	}

	r := run(t, db, "verify", "--pack", w.Pack, "--turns", w.Turns, "--out", filepath.Join(dir, "out"))
	if r.code != 0 && r.code != 1 {
		t.Fatalf("resumed verify exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "resumed:") {
		t.Errorf("resumed verify does not say it resumed; stdout:\n%s", r.stdout)
	}
	var total, distinct int
	if err := conn.QueryRow("SELECT count(*), count(DISTINCT label) FROM company_eval_turns").Scan(&total, &distinct); err != nil {
		t.Fatal(err)
	}
	if total != tasks || distinct != tasks {
		t.Errorf("after kill at %d rows and resume: %d rows, %d distinct labels, want %d and %d", killedAt, total, distinct, tasks, tasks)
	}
	var runs int
	if err := conn.QueryRow("SELECT count(*) FROM company_eval_runs").Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if runs != 1 {
		t.Errorf("runs = %d, want 1 (the resumed run is the same run)", runs)
	}
}

// TestResumeKeyedByContent (issue 12 item 2) verifies a candidate, edits one
// of its traces and verifies again: the edited turn is scored again as a
// new revision (its old row kept) and the others are reused.
func TestResumeKeyedByContent(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		dbPath := filepath.Join(dir, "assay.db")
		testResumeByContent(t, dir, dbPath, func() (*sql.DB, error) { return sql.Open("sqlite", dbPath) })
	})
	t.Run("postgres", func(t *testing.T) {
		base := os.Getenv("ASSAY_TEST_POSTGRES_URL")
		if base == "" {
			t.Skip("ASSAY_TEST_POSTGRES_URL is not set; skipping the Postgres resume test")
		}
		dsn := pgSchema(t, base)
		testResumeByContent(t, t.TempDir(), dsn, func() (*sql.DB, error) { return sql.Open("pgx", dsn) })
	})
}

func testResumeByContent(t *testing.T, dir, db string, open func() (*sql.DB, error)) {
	cand := filepath.Join(dir, "candidate-a")
	if err := os.CopyFS(cand, os.DirFS(filepath.Join(root, "examples/runs/candidate-a"))); err != nil {
		t.Fatal(err)
	}
	const edited = "task_create_release_blocker"
	verifyOnce := func() (result, map[string]turnOut) {
		t.Helper()
		out := filepath.Join(dir, "out")
		r := run(t, db, "verify", "--pack", "packs/example.yaml", "--run", cand, "--out", out)
		if r.code != 0 && r.code != 1 {
			t.Fatalf("verify exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		var results []turnOut
		readJSON(t, filepath.Join(out, "results.json"), &results)
		byLabel := map[string]turnOut{}
		for _, tr := range results {
			byLabel[tr.Label] = tr
		}
		return r, byLabel
	}
	_, first := verifyOnce()
	if !first[edited].Finalized {
		t.Fatalf("%s is not finalized before the edit", edited)
	}
	// The harness re-ran the turn and it gave up without finalizing.
	writeText(t, filepath.Join(cand, "results", edited+".ndjson"), `{"type":"done","reply":"gave up","finalized":false}`+"\n")

	_, second := verifyOnce()
	if second[edited].Finalized {
		t.Errorf("%s: finalized after the trace says false: the old score was reused", edited)
	}
	for label, tr := range first {
		if label != edited && !cmp.Equal(tr, second[label]) {
			t.Errorf("%s changed though its inputs did not:\n%s", label, cmp.Diff(tr, second[label]))
		}
	}
	conn, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query("SELECT label, count(*), max(revision) FROM company_eval_turns GROUP BY label")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string][2]int{}
	for rows.Next() {
		var label string
		var n, rev int
		if err := rows.Scan(&label, &n, &rev); err != nil {
			t.Fatal(err)
		}
		got[label] = [2]int{n, rev}
	}
	want := map[string][2]int{}
	for label := range first {
		if first[label].Status == "missing" {
			continue
		}
		want[label] = [2]int{1, 1}
	}
	want[edited] = [2]int{2, 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored rows and latest revision per label (-want +got):\n%s", diff)
	}
}
