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
func pgSchema(t *testing.T, base string) string {
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
