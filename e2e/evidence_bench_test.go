package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/assay-eval/assay/host/store"
)

// assayTimed runs assay with args and returns its wall time.
func assayTimed(b *testing.B, args ...string) time.Duration {
	b.Helper()
	cmd := exec.Command(assay, args...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 1) {
		b.Fatalf("assay %v: %v\n%s", args, err, out)
	}
	return time.Since(start)
}

// BenchmarkEvidence10k verifies 10,000 turns of 200-event traces (ten
// candidates of a 1,000-task pack: a 10,000-task pack of six scorers is over
// the pack size limit; 12 distinct traces, one pair of snapshots, as in
// BenchmarkVerify10k) with SQLite and reports the database's bytes on disk
// per turn, the evidence bytes per turn, and one distinct trace's size raw
// and stored; then rescores each candidate's stored evidence in-process
// (every turn scored again: the in-process scorers are another scorer
// version) and reports its throughput against verify's in-process
// throughput from files (rescore is one process per candidate, so it pays
// ten process starts to verify's one).
func BenchmarkEvidence10k(b *testing.B) {
	const candidates = 10
	w := makeWorkload(b, b.TempDir(), 1000, candidates, 200)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		db := filepath.Join(dir, "assay.db")
		base := []string{"--plugin-dir", pluginDir, "--db", db}
		assayTimed(b, append(base, "verify", "--pack", w.Pack, "--turns", w.Turns, "--format", "json")...)
		reportEvidence(b, db, w.N)

		inp, _ := verifyOnce(b, w, "--in-process")
		var rescore time.Duration
		for c := 0; c < candidates; c++ {
			rescore += assayTimed(b, append(base, "rescore", "--in-process", "--pack", w.Pack,
				"--candidate", fmt.Sprintf("cand-%03d", c), "--format", "json")...)
		}
		b.ReportMetric(float64(w.N)/rescore.Seconds(), "rescore_turns/s")
		b.ReportMetric(float64(w.N)/inp.Seconds(), "verify_inproc_turns/s")
		b.ReportMetric(inp.Seconds()/rescore.Seconds(), "rescore/verify_speed")
	}
}

func reportEvidence(b *testing.B, db string, turns int) {
	b.Helper()
	var disk int64
	for _, f := range []string{db, db + "-wal"} {
		if st, err := os.Stat(f); err == nil {
			disk += st.Size()
		}
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ev, err := st.EvidenceStats(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	var traceRaw, traceStored, traces int64
	rows, err := st.DB().Query(`SELECT size, length(data) FROM company_eval_blobs WHERE kind = 'trace'`)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var raw, stored int64
		if err := rows.Scan(&raw, &stored); err != nil {
			b.Fatal(err)
		}
		traceRaw, traceStored, traces = traceRaw+raw, traceStored+stored, traces+1
	}
	rows.Close()
	b.ReportMetric(float64(disk)/float64(turns), "db_B/turn")
	b.ReportMetric(float64(ev.Compressed)/float64(turns), "evidence_B/turn")
	if traces > 0 {
		b.ReportMetric(float64(traceRaw)/float64(traces), "trace_raw_B")
		b.ReportMetric(float64(traceStored)/float64(traces), "trace_stored_B")
	}
}
