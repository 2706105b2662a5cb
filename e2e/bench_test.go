package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// verifyOnce runs assay verify on a workload with a fresh SQLite database and
// returns the wall time and the peak resident memory of the assay process.
func verifyOnce(b *testing.B, w workload, extra ...string) (time.Duration, int64) {
	b.Helper()
	dir := b.TempDir()
	args := append([]string{"--plugin-dir", pluginDir, "--db", filepath.Join(dir, "assay.db"), "verify",
		"--pack", w.Pack, "--turns", w.Turns, "--out", filepath.Join(dir, "out"), "--format", "json"}, extra...)
	cmd := exec.Command(assay, args...)
	var se bytes.Buffer
	cmd.Stderr = &se
	start := time.Now()
	rss, err := runPeakRSS(cmd)
	elapsed := time.Since(start)
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 1) {
		b.Fatalf("assay verify: %v\n%s", err, se.String())
	}
	return elapsed, rss
}

// BenchmarkVerify10k verifies 10,000 turns (200-event traces, tasks over all
// six scorers, two CEL checks a task) end to end with SQLite, out-of-process
// and in-process, and reports both throughputs and their ratio.
func BenchmarkVerify10k(b *testing.B) {
	w := makeWorkload(b, b.TempDir(), 1000, 10, 200)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		oop, _ := verifyOnce(b, w)
		inp, _ := verifyOnce(b, w, "--in-process")
		oopRate := float64(w.N) / oop.Seconds()
		inRate := float64(w.N) / inp.Seconds()
		b.ReportMetric(oopRate, "turns/s")
		b.ReportMetric(inRate, "inproc_turns/s")
		b.ReportMetric(oopRate/inRate, "oop/inproc")
	}
}

// BenchmarkVerifyPeakRSS100k verifies 100,000 turns (100 candidates of a
// 1,000-task pack) and reports the assay process's peak resident memory.
func BenchmarkVerifyPeakRSS100k(b *testing.B) {
	if os.Getenv("ASSAY_BENCH_SHORT") != "" {
		b.Skip("ASSAY_BENCH_SHORT is set")
	}
	w := makeWorkload(b, b.TempDir(), 1000, 100, 60)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, rss := verifyOnce(b, w)
		b.ReportMetric(float64(rss)/(1<<20), "peak_rss_MB")
		b.ReportMetric(float64(w.N)/d.Seconds(), "turns/s")
	}
}
