package e2e

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The queue benchmarks' run: queueBenchCandidates × queueBenchTasks turns
// (a pack of 10,000 tasks is over the pack size limit).
const (
	queueBenchTasks      = 1000
	queueBenchCandidates = 10
)

// BenchmarkQueueWorkers (issue 22, numbers) scores the same 10,000-turn
// Postgres run with one worker, then with two, each pinned to its own core
// with taskset when it is installed, and reports each one's turns/s and
// their ratio; every candidate is queued first (verify --queue --detach, one
// per candidate), then the workers are started, and the timed part is from
// their start to the last job done.
func BenchmarkQueueWorkers(b *testing.B) {
	base := os.Getenv("ASSAY_TEST_POSTGRES_URL")
	if base == "" {
		b.Skip("ASSAY_TEST_POSTGRES_URL is not set; the queue benchmarks need Postgres")
	}
	dir := b.TempDir()
	w := makeWorkload(b, dir, queueBenchTasks, queueBenchCandidates, 50)
	files := splitTurns(b, w.Turns)
	_, pinned := exec.LookPath("taskset")
	var rates [3]float64
	for i := 0; i < b.N; i++ {
		for n := 1; n <= 2; n++ {
			rates[n] = float64(w.N) / queueWorkersRun(b, pgSchema(b, base), w.Pack, files, n, pinned == nil).Seconds()
		}
	}
	b.ReportMetric(rates[1], "turns/s_1worker")
	b.ReportMetric(rates[2], "turns/s_2workers")
	b.ReportMetric(rates[2]/rates[1], "ratio_2v1")
	if pinned != nil {
		b.Log("taskset is not installed: the workers were not pinned")
	}
}

// queueWorkersRun queues every turns file detached, then starts n workers
// and times them until no job is pending.
func queueWorkersRun(b *testing.B, db, pack string, files []string, n int, pin bool) time.Duration {
	for _, f := range files {
		if r := run(b, db, "verify", "--pack", pack, "--turns", f, "--queue", "--detach"); r.code != 0 {
			b.Fatalf("verify --queue --detach: exit %d\n%s", r.code, r.stderr)
		}
	}
	start := time.Now()
	var ws []*workerProc
	for k := 0; k < n; k++ {
		var pre []string
		if pin {
			pre = []string{"taskset", "-c", fmt.Sprint(k)}
		}
		ws = append(ws, startWorkerCmd(b, pre, pluginDir, db, pack))
	}
	if !waitFor(30*time.Minute, func() bool { return pendingJobs(b, db) == 0 }) {
		b.Fatal("the jobs did not finish within 30 minutes")
	}
	d := time.Since(start)
	for _, wk := range ws {
		wk.stop(b)
	}
	return d
}

// pendingJobs counts the jobs not finished.
func pendingJobs(tb testing.TB, db string) int {
	return countJobsWhere(tb, db, `state NOT IN ('completed', 'discarded', 'cancelled')`)
}

func countJobsWhere(tb testing.TB, db, where string) int {
	tb.Helper()
	conn, err := sql.Open("pgx", db)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRow(`SELECT count(*) FROM river_job WHERE ` + where).Scan(&n); err != nil {
		tb.Fatalf("counting jobs: %v", err)
	}
	return n
}

// BenchmarkQueueOverhead (issue 22, numbers) verifies the same 10,000-turn
// input with `verify --queue` and one worker, and with a plain `verify`, each
// on a fresh schema of the same Postgres server, and reports plain/queue
// (1 means no overhead) and the Postgres rows and bytes written per turn by
// the queued run (assay's tables and River's).
func BenchmarkQueueOverhead(b *testing.B) {
	base := os.Getenv("ASSAY_TEST_POSTGRES_URL")
	if base == "" {
		b.Skip("ASSAY_TEST_POSTGRES_URL is not set; the queue benchmarks need Postgres")
	}
	w := makeWorkload(b, b.TempDir(), queueBenchTasks, queueBenchCandidates, 50)
	var queued, plain time.Duration
	var rows, bytes float64
	for i := 0; i < b.N; i++ {
		qdb, pdb := pgSchema(b, base), pgSchema(b, base)
		wk := startWorkerCmd(b, nil, pluginDir, qdb, w.Pack)
		queued = assayTimed(b, "--plugin-dir", pluginDir, "--db", qdb, "verify", "--pack", w.Pack, "--turns", w.Turns, "--queue")
		wk.stop(b)
		plain = assayTimed(b, "--plugin-dir", pluginDir, "--db", pdb, "verify", "--pack", w.Pack, "--turns", w.Turns)
		rows, bytes = schemaRowsBytes(b, qdb)
	}
	b.ReportMetric(plain.Seconds()/queued.Seconds(), "plain/queue")
	b.ReportMetric(float64(w.N)/queued.Seconds(), "turns/s_queue")
	b.ReportMetric(float64(w.N)/plain.Seconds(), "turns/s_plain")
	b.ReportMetric(rows/float64(w.N), "rows/turn")
	b.ReportMetric(bytes/float64(w.N), "bytes/turn")
}

// schemaRowsBytes is the rows and on-disk bytes (tables, indexes, TOAST) of
// every table in the schema db's search_path names.
func schemaRowsBytes(tb testing.TB, db string) (rows, bytes float64) {
	tb.Helper()
	u, err := url.Parse(db)
	if err != nil {
		tb.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	conn, err := sql.Open("pgx", db)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Exec(`ANALYZE`); err != nil {
		tb.Fatal(err)
	}
	err = conn.QueryRow(`SELECT coalesce(sum(c.reltuples), 0), coalesce(sum(pg_total_relation_size(c.oid)), 0)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind = 'r'`, schema).Scan(&rows, &bytes)
	if err != nil {
		tb.Fatalf("sizing schema %s: %v", schema, err)
	}
	return rows, bytes
}

// splitTurns writes a turns file's lines into one file per candidate, beside
// it (its trace paths stay relative to the same directory).
func splitTurns(tb testing.TB, path string) []string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	by := map[string]*strings.Builder{}
	var order []string
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var t struct{ Candidate string }
		if err := json.Unmarshal([]byte(line), &t); err != nil {
			tb.Fatal(err)
		}
		if by[t.Candidate] == nil {
			by[t.Candidate] = &strings.Builder{}
			order = append(order, t.Candidate)
		}
		by[t.Candidate].WriteString(line)
	}
	var files []string
	for _, c := range order {
		f := filepath.Join(filepath.Dir(path), c+".jsonl")
		if err := os.WriteFile(f, []byte(by[c].String()), 0o644); err != nil {
			tb.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}
