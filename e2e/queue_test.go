package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// queueDB is a fresh Postgres schema for a queue test, or a skip.
func queueDB(t *testing.T) string {
	t.Helper()
	base := os.Getenv("ASSAY_TEST_POSTGRES_URL")
	if base == "" {
		t.Skip("ASSAY_TEST_POSTGRES_URL is not set; skipping the queue tests (the queue needs Postgres)")
	}
	return pgSchema(t, base)
}

// workerProc is an `assay worker` child process.
type workerProc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startWorker starts a worker on db with the given plugin directory.
func startWorker(t *testing.T, plugins, db, pack string, extra ...string) *workerProc {
	t.Helper()
	args := append([]string{"--plugin-dir", plugins, "--db", db, "worker", "--pack", pack, "--job-timeout", "4s"}, extra...)
	cmd := exec.Command(assay, args...)
	cmd.Dir = root
	w := &workerProc{cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting worker: %v", err)
	}
	go func() { w.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-w.done
		if t.Failed() {
			t.Logf("worker %d stderr:\n%s", cmd.Process.Pid, w.stderr.String())
		}
	})
	return w
}

// stop sends SIGTERM and waits for the worker to drain and exit.
func (w *workerProc) stop(t *testing.T) {
	t.Helper()
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-w.done:
		w.done <- err
		if err != nil {
			t.Errorf("worker after SIGTERM: %v\n%s", err, w.stderr.String())
		}
		if !strings.Contains(w.stderr.String(), "worker: drained") {
			t.Errorf("worker after SIGTERM did not drain:\n%s", w.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Errorf("worker did not exit within 20s of SIGTERM")
	}
}

// readOut reads results.json and summary.json of an --out directory, with
// what legitimately differs between two databases removed (run ids, the
// turns reused from the queue's records).
func readOut(t *testing.T, dir string) (results []map[string]any, summary map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &results); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	if b, err = os.ReadFile(filepath.Join(dir, "summary.json")); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &summary); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	if cs, ok := summary["candidates"].([]any); ok {
		for _, c := range cs {
			m := c.(map[string]any)
			delete(m, "run_id")
			delete(m, "reused")
		}
	}
	delete(summary, "scorer_health")
	return results, summary
}

// TestQueueWorkersMatchLocalVerify (issue 22, tests): one enqueuer and three
// workers verify the example runs; results.json and summary.json equal a
// local verify's field by field, and SIGTERM drains every worker.
func TestQueueWorkersMatchLocalVerify(t *testing.T) {
	local, queued := queueDB(t), queueDB(t)
	dir := t.TempDir()
	pack := "packs/example.yaml"
	runs := []string{"--run", "examples/runs/candidate-a", "--run", "examples/runs/candidate-b"}
	var ws []*workerProc
	for range 3 {
		ws = append(ws, startWorker(t, pluginDir, queued, pack))
	}
	q := run(t, queued, append([]string{"verify", "--pack", pack, "--queue", "--batch-size", "1", "--queue-poll", "100ms",
		"--out", filepath.Join(dir, "q"), "--format", "json"}, runs...)...)
	l := run(t, local, append([]string{"verify", "--pack", pack, "--out", filepath.Join(dir, "l"), "--format", "json"}, runs...)...)
	if q.code != l.code {
		t.Fatalf("verify --queue exit %d, local verify exit %d\n%s", q.code, l.code, q.stderr)
	}
	if !strings.Contains(q.stderr, "jobs done") {
		t.Errorf("verify --queue printed no queue progress:\n%s", q.stderr)
	}
	qr, qs := readOut(t, filepath.Join(dir, "q"))
	lr, ls := readOut(t, filepath.Join(dir, "l"))
	if d := cmp.Diff(lr, qr); d != "" {
		t.Errorf("results.json: local (-) vs queue (+):\n%s", d)
	}
	if d := cmp.Diff(ls, qs); d != "" {
		t.Errorf("summary.json: local (-) vs queue (+):\n%s", d)
	}
	for _, w := range ws {
		w.stop(t)
	}
}

// TestQueueNeedsPostgres (issue 22, tests): --queue with SQLite is exit 2.
func TestQueueNeedsPostgres(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	r := run(t, db, "verify", "--pack", "packs/example.yaml", "--run", "examples/runs/candidate-a", "--queue")
	if r.code != 2 || !strings.Contains(r.stderr, "postgres") {
		t.Errorf("verify --queue on SQLite: exit %d, want 2 naming postgres\n%s", r.code, r.stderr)
	}
	r = run(t, db, "worker", "--pack", "packs/example.yaml")
	if r.code != 2 {
		t.Errorf("worker on SQLite: exit %d, want 2\n%s", r.code, r.stderr)
	}
}
