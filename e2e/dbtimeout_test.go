package e2e

import (
	"bytes"
	"database/sql"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/host/store/storetest"
)

// TestVerifyStalledDatabase (issue 14 item 6): a Postgres connection that
// stops answering in the middle of a verify (a proxy the test controls stops
// forwarding) ends the verify within the --db-timeout with exit 3 and a
// message saying to rerun; once the proxy recovers, the same command
// resumes the run and finishes it, every turn recorded once.
func TestVerifyStalledDatabase(t *testing.T) {
	base := os.Getenv("ASSAY_TEST_POSTGRES_URL")
	if base == "" {
		t.Skip("ASSAY_TEST_POSTGRES_URL is not set; skipping the stalled-database test")
	}
	direct := pgSchema(t, base)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	proxy := storetest.NewProxy(t, u.Host)
	db := proxy.URL(t, direct)
	conn, err := sql.Open("pgx", direct)
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

	const tasks, timeout = 2000, 2 * time.Second
	dir := t.TempDir()
	w := makeWorkload(t, dir, tasks, 1, 120)
	args := []string{"--plugin-dir", pluginDir, "--db", db, "--db-timeout", timeout.String(),
		"verify", "--pack", w.Pack, "--turns", w.Turns, "--out", filepath.Join(dir, "out")}
	cmd := exec.Command(assay, args...)
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	stalledAt := -1
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if n := count(); n > 0 && n < tasks {
			proxy.Stall()
			stalledAt = n
			break
		}
	}
	if stalledAt < 0 {
		cmd.Process.Kill()
		t.Fatalf("verify was not caught mid-run (rows %d); stderr:\n%s", count(), se.String())
	}
	stalled := time.Now()
	// One statement waits the timeout plus a grace; database/sql may try
	// one more connection, which the connect timeout ends.
	limit := 4*timeout + 10*time.Second
	select {
	case err = <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		t.Fatalf("verify still running %s after the database stalled (--db-timeout %s)", limit, timeout)
	}
	t.Logf("verify ended %s after the stall at %d rows; stderr:\n%s", time.Since(stalled).Round(time.Millisecond), stalledAt, se.String())
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 {
		t.Fatalf("verify on a stalled database: %v, want exit 3; stderr:\n%s", err, se.String())
	}
	for _, want := range []string{"database", "run the same command again to resume"} {
		if !strings.Contains(se.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, se.String())
		}
	}
	var status string
	if err := conn.QueryRow("SELECT status FROM company_eval_runs").Scan(&status); err != nil || status != "running" {
		t.Errorf("interrupted run status = %q (%v), want running (resumable)", status, err)
	}

	proxy.Recover()
	r := run(t, db, "--db-timeout", timeout.String(), "verify", "--pack", w.Pack, "--turns", w.Turns,
		"--out", filepath.Join(dir, "out"))
	if r.code != 0 && r.code != 1 {
		t.Fatalf("rerun after the proxy recovered: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "resumed:") {
		t.Errorf("rerun does not say it resumed; stdout:\n%s", r.stdout)
	}
	var total, distinct, runs int
	if err := conn.QueryRow("SELECT count(*), count(DISTINCT label) FROM company_eval_turns").Scan(&total, &distinct); err != nil {
		t.Fatal(err)
	}
	if total != tasks || distinct != tasks {
		t.Errorf("after the stall at %d rows and a rerun: %d rows, %d labels, want %d", stalledAt, total, distinct, tasks)
	}
	if err := conn.QueryRow("SELECT count(*), max(status) FROM company_eval_runs").Scan(&runs, &status); err != nil {
		t.Fatal(err)
	}
	if runs != 1 || status != "completed" {
		t.Errorf("runs = %d with status %q, want 1 completed (the interrupted run resumed)", runs, status)
	}
}
