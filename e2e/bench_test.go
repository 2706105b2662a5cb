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
	d, rss, _ := verifyOnceCPU(b, w, extra...)
	return d, rss
}

// verifyOnceCPU is verifyOnce that also returns the CPU time (user +
// system) of the assay process and the plugins it ran and waited for.
func verifyOnceCPU(b *testing.B, w workload, extra ...string) (time.Duration, int64, time.Duration) {
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
	return elapsed, rss, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// BenchmarkVerify10k verifies 10,000 turns (200-event traces, tasks over all
// six scorers, two CEL checks a task) end to end with SQLite, out-of-process
// and in-process, and reports both throughputs and their ratio, and the CPU
// seconds of each (assay and its plugins, user + system): on a machine
// whose cores are all busy the ratio is bound by the ratio of CPU seconds.
func BenchmarkVerify10k(b *testing.B) {
	w := makeWorkload(b, b.TempDir(), 1000, 10, 200)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		oop, _, oopCPU := verifyOnceCPU(b, w)
		inp, _, inCPU := verifyOnceCPU(b, w, "--in-process")
		oopRate := float64(w.N) / oop.Seconds()
		inRate := float64(w.N) / inp.Seconds()
		b.ReportMetric(oopRate, "turns/s")
		b.ReportMetric(inRate, "inproc_turns/s")
		b.ReportMetric(oopRate/inRate, "oop/inproc")
		b.ReportMetric(oopCPU.Seconds(), "cpu_s")
		b.ReportMetric(inCPU.Seconds(), "inproc_cpu_s")
		b.ReportMetric(inCPU.Seconds()/oopCPU.Seconds(), "cpu_inproc/oop")
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
