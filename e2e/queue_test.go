package e2e

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// queueDB is a fresh Postgres schema for a queue test, or a skip.
func queueDB(t testing.TB) string {
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
func startWorker(t testing.TB, plugins, db, pack string, extra ...string) *workerProc {
	t.Helper()
	return startWorkerCmd(t, nil, plugins, db, pack, extra...)
}

// startWorkerCmd is startWorker run through a command prefix (taskset).
func startWorkerCmd(t testing.TB, prefix []string, plugins, db, pack string, extra ...string) *workerProc {
	t.Helper()
	args := append([]string{"--plugin-dir", plugins, "--db", db, "worker", "--pack", pack, "--job-timeout", "4s"}, extra...)
	if len(prefix) > 0 {
		args = append(append(prefix[1:], assay), args...)
	}
	name := assay
	if len(prefix) > 0 {
		name = prefix[0]
	}
	cmd := exec.Command(name, args...)
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
func (w *workerProc) stop(t testing.TB) {
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
	checkDoctorQueue(t, queued)
	for _, w := range ws {
		w.stop(t)
	}
}

// checkDoctorQueue checks that `assay doctor` shows the queue's completed
// jobs and the workers that took them (issue 22 item 3).
func checkDoctorQueue(t *testing.T, db string) {
	t.Helper()
	r := run(t, db, "doctor", "--format", "json")
	var rep struct {
		Queue *struct {
			Installed bool
			Jobs      struct{ Completed, Running int }
			Workers   []struct{ ID string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Queue == nil {
		t.Fatalf("doctor --format json: %v, no queue:\n%s%s", err, r.stdout, r.stderr)
	}
	if !rep.Queue.Installed || rep.Queue.Jobs.Completed == 0 || len(rep.Queue.Workers) == 0 {
		t.Errorf("doctor's queue = %+v, want installed, completed jobs and recent workers", *rep.Queue)
	}
	if r = run(t, db, "doctor"); !strings.Contains(r.stdout, "queue") || !strings.Contains(r.stdout, "worker assay-") {
		t.Errorf("doctor's text shows no queue or workers:\n%s", r.stdout)
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

// startVerify starts `verify --queue` as a child process.
func startVerify(t *testing.T, db string, args ...string) (*exec.Cmd, *syncBuffer, chan int) {
	t.Helper()
	cmd := exec.Command(assay, append([]string{"--plugin-dir", pluginDir, "--db", db, "verify", "--queue", "--queue-poll", "100ms"}, args...)...)
	cmd.Dir = root
	errb := &syncBuffer{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code := make(chan int, 1)
	go func() {
		err := cmd.Wait()
		c := 0
		if ee, ok := err.(*exec.ExitError); ok {
			c = ee.ExitCode()
		} else if err != nil {
			c = -1
		}
		code <- c
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, errb, code
}

// waitFor polls cond every 50ms for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// turnCounts counts the recorded turn rows per (run, label, epoch) of db.
func turnCounts(t *testing.T, db string) map[string]int {
	t.Helper()
	conn, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(`SELECT r.candidate, t.label, t.epoch, count(*) FROM company_eval_turns t
		JOIN company_eval_runs r ON r.id = t.run_id GROUP BY r.candidate, t.label, t.epoch`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var cand, label string
		var epoch, n int
		if err := rows.Scan(&cand, &label, &epoch, &n); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("%s/%s.%d", cand, label, epoch)] = n
	}
	return out
}

// TestQueueSIGKILLLosesNothing (issue 22, tests): a generated 5,000-turn
// run on one enqueuer and three workers, one of them killed with SIGKILL
// mid-run: the run completes, every turn is recorded exactly once, and the
// outputs equal a local verify's. Another worker gets SIGTERM while it holds
// a job: it drains (finishes the job, takes no other) and exits 0.
func TestQueueSIGKILLLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("the 5,000-turn queue run is long")
	}
	local, queued := queueDB(t), queueDB(t)
	dir := t.TempDir()
	wl := makeWorkload(t, dir, 1000, 5, 10)
	var ws []*workerProc
	for range 3 {
		ws = append(ws, startWorker(t, pluginDir, queued, wl.Pack, "--concurrency", "2"))
	}
	_, errb, code := startVerify(t, queued, "--pack", wl.Pack, "--turns", wl.Turns, "--batch-size", "50",
		"--out", filepath.Join(dir, "q"), "--format", "json")
	// Kill a worker while it holds a job: River rescues the job after its
	// timeout and another worker scores it.
	victim := ws[0].cmd.Process.Pid
	if !waitFor(90*time.Second, func() bool { return runningOn(t, queued, victim) > 0 }) {
		t.Fatalf("worker %d took no job within 90s:\n%s", victim, errb.String())
	}
	_ = ws[0].cmd.Process.Signal(syscall.SIGKILL)
	// SIGTERM another while it holds a job: it finishes it and exits.
	drained := ws[1].cmd.Process.Pid
	if !waitFor(90*time.Second, func() bool { return runningOn(t, queued, drained) > 0 }) {
		t.Fatalf("worker %d took no job within 90s:\n%s", drained, errb.String())
	}
	ws[1].stop(t)
	if n := retriedOn(t, queued, drained); n != 0 {
		t.Errorf("%d jobs of the drained worker %d were retried, want none (it finishes what it holds)", n, drained)
	}
	if n := runningOn(t, queued, drained); n != 0 {
		t.Errorf("%d jobs still running on the drained worker %d", n, drained)
	}
	l := run(t, local, "verify", "--pack", wl.Pack, "--turns", wl.Turns, "--out", filepath.Join(dir, "l"), "--format", "json")
	var qc int
	select {
	case qc = <-code:
	case <-time.After(180 * time.Second):
		t.Fatalf("verify --queue did not finish after a worker was killed:\n%s", errb.String())
	}
	if qc != l.code {
		t.Fatalf("verify --queue exit %d, local exit %d\n%s", qc, l.code, errb.String())
	}
	if n := retriedOn(t, queued, victim); n == 0 {
		t.Errorf("no job of the killed worker %d was retried", victim)
	}
	counts := turnCounts(t, queued)
	if len(counts) != wl.N {
		t.Errorf("%d turns recorded, want %d", len(counts), wl.N)
	}
	for k, n := range counts {
		if n != 1 {
			t.Errorf("turn %s recorded %d times, want once", k, n)
		}
	}
	qr, qs := readOut(t, filepath.Join(dir, "q"))
	lr, ls := readOut(t, filepath.Join(dir, "l"))
	if d := cmp.Diff(lr, qr); d != "" {
		t.Errorf("results.json: local (-) vs queue (+):\n%s", d)
	}
	if d := cmp.Diff(ls, qs); d != "" {
		t.Errorf("summary.json: local (-) vs queue (+):\n%s", d)
	}
	ws[2].stop(t)
}

// TestQueueTamperedWorkerRefuses (issue 22, tests): a worker whose plugin
// binaries differ from the run's scorer digests takes none of its jobs (it
// serves the queue of its own scorer version and names it); a worker with
// the right binaries finishes them.
func TestQueueTamperedWorkerRefuses(t *testing.T) {
	db := queueDB(t)
	dir := t.TempDir()
	tampered := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(tampered, 0o755); err != nil {
		t.Fatal(err)
	}
	bins, _ := filepath.Glob(filepath.Join(pluginDir, "assay-scorer-*"))
	for _, b := range bins {
		src, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tampered, filepath.Base(b)), append(src, 0), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	reg := []string{"--plugin-dir", tampered, "--db", filepath.Join(dir, "seed.db"), "plugins", "register"}
	for _, b := range bins {
		reg = append(reg, filepath.Join(tampered, filepath.Base(b)))
	}
	if r := runRaw(t, reg...); r.code != 0 {
		t.Fatalf("registering the tampered plugins: exit %d\n%s", r.code, r.stderr)
	}
	bad := startWorker(t, tampered, db, "packs/example.yaml")
	_, errb, code := startVerify(t, db, "--pack", "packs/example.yaml", "--run", "examples/runs/candidate-a",
		"--out", filepath.Join(dir, "q"))
	if !waitFor(30*time.Second, func() bool { return strings.Contains(errb.String(), "0/1 jobs done") }) {
		t.Fatalf("no job was queued:\n%s", errb.String())
	}
	time.Sleep(2 * time.Second) // the tampered worker polls for jobs
	if n := countJobs(t, db, `attempted_by[1] LIKE $1`, bad.cmd.Process.Pid); n != 0 {
		t.Errorf("the tampered worker took %d jobs, want none:\n%s", n, bad.stderr.String())
	}
	if !strings.Contains(bad.stderr.String(), "from queue assay_") {
		t.Errorf("the tampered worker does not name its queue:\n%s", bad.stderr.String())
	}
	good := startWorker(t, pluginDir, db, "packs/example.yaml")
	select {
	case c := <-code:
		if c != 0 && c != 1 {
			t.Errorf("verify --queue: exit %d\n%s", c, errb.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("verify --queue did not finish with a good worker:\n%s", errb.String())
	}
	if n := len(turnCounts(t, db)); n != 3 {
		t.Errorf("%d turns recorded, want 3", n)
	}
	bad.stop(t)
	good.stop(t)
}

// runningOn counts the jobs running on the worker process pid.
func runningOn(t *testing.T, db string, pid int) int {
	return countJobs(t, db, `state = 'running' AND attempted_by[array_length(attempted_by, 1)] LIKE $1`, pid)
}

// retriedOn counts the completed jobs that an attempt on pid left unfinished.
func retriedOn(t *testing.T, db string, pid int) int {
	return countJobs(t, db, `state = 'completed' AND attempt > 1 AND attempted_by[1] LIKE $1`, pid)
}

func countJobs(t testing.TB, db, where string, pid int) int {
	t.Helper()
	conn, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRow(`SELECT count(*) FROM river_job WHERE `+where, fmt.Sprintf("assay-%%-%d-%%", pid)).Scan(&n); err != nil {
		if strings.Contains(err.Error(), "does not exist") {
			return 0 // River's tables are not installed yet
		}
		t.Fatalf("counting jobs: %v", err)
	}
	return n
}

// TestQueueDetachRunsWait (issue 22 item 1): verify --queue --detach prints
// the run id alone on the first line and returns; runs wait exits with
// verify's exit code and writes the same results.json; runs show prints the
// progress, then the summary.
func TestQueueDetachRunsWait(t *testing.T) {
	local, queued := queueDB(t), queueDB(t)
	dir := t.TempDir()
	pack := "packs/example.yaml"
	w := startWorker(t, pluginDir, queued, pack)
	d := run(t, queued, "verify", "--pack", pack, "--run", "examples/runs/candidate-b", "--queue", "--detach")
	if d.code != 0 {
		t.Fatalf("verify --queue --detach: exit %d\n%s", d.code, d.stderr)
	}
	id := strings.SplitN(d.stdout, "\n", 2)[0]
	if _, err := strconv.ParseInt(id, 10, 64); err != nil {
		t.Fatalf("first line of verify --detach = %q, want the run id alone", id)
	}
	if r := run(t, queued, "runs", "show", id, "--format", "json"); r.code != 0 || !strings.Contains(r.stdout, `"jobs"`) {
		t.Errorf("runs show before the wait: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	wr := run(t, queued, "runs", "wait", id, "--pack", pack, "--out", filepath.Join(dir, "q"), "--format", "json")
	l := run(t, local, "verify", "--pack", pack, "--run", "examples/runs/candidate-b", "--out", filepath.Join(dir, "l"), "--format", "json")
	if wr.code != l.code {
		t.Fatalf("runs wait exit %d, local verify exit %d\n%s", wr.code, l.code, wr.stderr)
	}
	qr, _ := readOut(t, filepath.Join(dir, "q"))
	lr, _ := readOut(t, filepath.Join(dir, "l"))
	if d := cmp.Diff(lr, qr); d != "" {
		t.Errorf("results.json: local (-) vs runs wait (+):\n%s", d)
	}
	r := run(t, queued, "runs", "show", id, "--format", "json")
	var v struct {
		Status  string
		Summary map[string]any
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.Status != "completed" || v.Summary == nil {
		t.Errorf("runs show after the wait = %+v (%v), want completed with its summary\n%s", v, err, r.stdout)
	}
	if r := run(t, queued, "verify", "--pack", pack, "--run", "examples/runs/candidate-a", "--detach"); r.code != 2 {
		t.Errorf("--detach without --queue: exit %d, want 2", r.code)
	}
	w.stop(t)
}
