package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkInsertTurns stores 10,000 turn rows per iteration with InsertTurns
// and reports rows/s.
func BenchmarkInsertTurns(b *testing.B) {
	const rows = 10000
	for _, be := range backends(b) {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			s := openStore(b, be.open(b))
			score, process, kpi := 0.5, 0.9, 0.3
			checks := []byte(`[{"kpi":"task_created","score":1,"passed":true,"detail":"task T-12 created"}]`)
			result := []byte(`{"label":"t","candidate":"c","turn_score":0.5,"process_score":0.9,"kpi_score":0.3}`)
			var elapsed time.Duration
			for i := 0; b.Loop(); i++ {
				run, err := s.BeginRun(ctx, RunKey{Candidate: fmt.Sprintf("c%d", i), PackSHA256: "p", ScorerVersion: "v"}, false)
				if err != nil {
					b.Fatal(err)
				}
				turns := make([]TurnRow, rows)
				for j := range turns {
					turns[j] = TurnRow{RunID: run.ID, Label: fmt.Sprintf("task_%05d", j), Attempt: 1, Status: TurnScored,
						ProcessScore: &process, KPIScore: &kpi, TurnScore: &score, Checks: checks, FailureTags: []byte(`[]`),
						ScorerID: "task_state", ScorerSHA256: "0123456789abcdef", Result: result}
				}
				start := time.Now()
				if err := s.InsertTurns(ctx, turns); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
			}
			b.ReportMetric(float64(rows*b.N)/elapsed.Seconds(), "rows/s")
		})
	}
}

// BenchmarkRecordVerify10k is the store's share of verifying 10,000
// one-turn answers (e2e BenchmarkVerifyAnswers10k): open a new database
// (migrations included), store the pack's 10,000 tasks, begin the run, read
// its recorded turns, and record 40 chunks of 256 turns, each with a trace
// blob per turn and its metrics row in the turn. The rows are made before the timer starts.
// It reports the CPU seconds of the process and, on Postgres, of the local
// server.
func BenchmarkRecordVerify10k(b *testing.B) {
	const turns, chunk = 10_000, 256
	tasks := make([]PackTask, turns)
	for i := range tasks {
		tasks[i] = PackTask{PackSHA256: "pack", Company: "gen", Label: fmt.Sprintf("t%07d", i), Scorer: "answer_keywords", Weight: 1}
	}
	checks := []byte(`[{"name":"answer_keywords","source":"scorer:answer_keywords","score":1,"passed":true,"detail":"found every keyword in the answer: release, pass"},{"name":"finalized","source":"cel","score":1,"passed":true,"detail":""}]`)
	gz := make([]byte, 151)
	metrics := make([]byte, 156)
	for _, be := range backends(b) {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			var m cpuMeter
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				dsn := be.open(b)
				app := fmt.Sprintf("assay_bench_%d_%d", os.Getpid(), i)
				if be.name == "postgres" {
					dsn += "&application_name=" + app
				}
				b.StartTimer()
				m.start()
				s, err := Open(ctx, dsn)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.UpsertPackTasks(ctx, tasks); err != nil {
					b.Fatal(err)
				}
				run, err := s.BeginRun(ctx, RunKey{Candidate: "c0000", PackSHA256: "pack", ScorerVersion: "v"}, false)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.TurnsDone(ctx, run.ID, run.Attempt); err != nil {
					b.Fatal(err)
				}
				m.stop()
				b.StopTimer()
				rows, blobs := benchChunks(run, turns, checks, gz, metrics)
				b.StartTimer()
				m.start()
				for c := 0; c*chunk < turns; c++ {
					lo, hi := c*chunk, min((c+1)*chunk, turns)
					if err := s.RecordTurns(ctx, blobs[lo:hi], rows[lo:hi]); err != nil {
						b.Fatal(err)
					}
				}
				m.stop()
				if be.name == "postgres" {
					m.server += backendCPUSeconds(b, s, app)
				}
				s.Close()
			}
			b.ReportMetric(m.client/float64(b.N), "cpu-s/op")
			if be.name == "postgres" {
				b.ReportMetric(m.server/float64(b.N), "server-cpu-s/op")
			}
		})
	}
}

// benchChunks makes n turn rows like verify's for answer turns, each
// keeping its metrics row, and a trace blob for each.
func benchChunks(run *Run, n int, checks, gz, metrics []byte) ([]TurnRow, []Blob) {
	rows := make([]TurnRow, n)
	blobs := make([]Blob, 0, n)
	process, kpi, score := 0.75, 1.0, 0.9125
	for i := range rows {
		trace, met := benchSHA(2*i), benchSHA(2*i+1) // random keys, as content hashes are
		result := fmt.Appendf(nil, `{"candidate":"c0000","label":"t%07d","epoch":1,"persona":"cto","status":"scored","process_score":0.75,"kpi_score":1,"turn_score":0.9125,"finalized":true,"error":false,"latency_s":2,"tool_calls":0,"cost_usd":null,"checks":%s,"failure_tags":[],"scorer":{"id":"answer_keywords","version":"1.0.0","sha256":"d91a63c0ae7b658832fbb9d10dfcdbd868ba1566cef8abb4e94b080ce72a0ea0"}}`, i, checks)
		rows[i] = TurnRow{RunID: run.ID, Label: fmt.Sprintf("t%07d", i), Epoch: 1, Attempt: run.Attempt, Revision: 1,
			InputKey: fmt.Sprintf("%064x", i), Status: TurnScored, ProcessScore: &process, KPIScore: &kpi, TurnScore: &score,
			Checks: checks, FailureTags: []byte(`[]`), ScorerID: "answer_keywords",
			ScorerSHA256: "d91a63c0ae7b658832fbb9d10dfcdbd868ba1566cef8abb4e94b080ce72a0ea0",
			Result:       result, TraceSHA256: trace, MetricsSHA256: met, Metrics: metrics}
		blobs = append(blobs, Blob{SHA256: trace, Kind: BlobTrace, Encoding: EncodingGzip, Size: 175, Data: gz})
	}
	return rows, blobs
}

func benchSHA(i int) string {
	sum := sha256.Sum256(strconv.AppendInt(nil, int64(i), 10))
	return hex.EncodeToString(sum[:])
}

// cpuMeter adds up the CPU seconds this process uses between start and
// stop; server is for the Postgres backends' (backendCPUSeconds).
type cpuMeter struct {
	client, server float64
	c0             float64
}

func (m *cpuMeter) start() { m.c0 = cpuSeconds() }
func (m *cpuMeter) stop()  { m.client += cpuSeconds() - m.c0 }

// cpuSeconds is the user and system CPU time this process has used.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// backendCPUSeconds is the CPU time (user and system) the server processes
// of the store's connections, which set application_name app, have used
// since they started; read from /proc, so 0 unless the server is local.
func backendCPUSeconds(b *testing.B, s *Store, app string) float64 {
	rows, err := s.db.Query(`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, app)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var ticks int64
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			b.Fatal(err)
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		for _, i := range []int{11, 12} { // utime, stime: fields 14 and 15
			n, _ := strconv.ParseInt(f[i], 10, 64)
			ticks += n
		}
	}
	return float64(ticks) / 100 // USER_HZ
}

// BenchmarkRecordLongRun records ASSAY_BENCH_RECORD_TURNS turns (100,000
// unless set) like verify's, 256 a chunk with a trace blob a turn, into one
// new SQLite database, and reports, over the last fifth of the turns, the
// time spent in RecordTurns — the recorder's serial stage, what sets
// verify's wall time when it is the slowest stage — and the process's CPU,
// per turn (docs/performance.md, "Flat memory", eighth round).
func BenchmarkRecordLongRun(b *testing.B) {
	n := 100_000
	if v := os.Getenv("ASSAY_BENCH_RECORD_TURNS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	const chunk = 256
	checks := []byte(`[{"name":"answer_keywords","source":"scorer:answer_keywords","score":1,"passed":true,"detail":"found every keyword in the answer: release, pass"},{"name":"finalized","source":"cel","score":1,"passed":true,"detail":""}]`)
	gz := make([]byte, 151)
	metrics := make([]byte, 156)
	ctx := context.Background()
	for b.Loop() {
		s, err := Open(ctx, filepath.Join(b.TempDir(), "assay.db"))
		if err != nil {
			b.Fatal(err)
		}
		run, err := s.BeginRun(ctx, RunKey{Candidate: "c0000", PackSHA256: "pack", ScorerVersion: "v"}, false)
		if err != nil {
			b.Fatal(err)
		}
		var inRecord time.Duration
		var m cpuMeter
		last := n - n/5
		for lo := 0; lo < n; lo += chunk {
			hi := min(lo+chunk, n)
			rows, blobs := benchChunks(run, hi-lo, checks, gz, metrics)
			for i := range rows { // distinct labels and keys across chunks
				rows[i].Label = fmt.Sprintf("t%09d", lo+i)
				blobs[i].SHA256 = benchSHA(2 * (lo + i))
				rows[i].TraceSHA256 = blobs[i].SHA256
			}
			if lo >= last && m.c0 == 0 {
				m.start()
			}
			start := time.Now()
			if err := s.RecordTurns(ctx, blobs, rows); err != nil {
				b.Fatal(err)
			}
			if lo >= last {
				inRecord += time.Since(start)
			}
		}
		m.stop()
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(inRecord.Microseconds())/float64(n-last), "record-µs/turn")
		b.ReportMetric(m.client*1e6/float64(n-last), "cpu-µs/turn")
	}
}
