package verify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/assay-eval/assay/pkg/scorer"
)

// BenchmarkRunTurnsFile verifies a turns file of 20 candidates × 500
// one-turn answers with a scorer that does nothing and no store: the
// host's own cost per turn (reading, checking and preparing the turns,
// finishing and summarising them), reported as CPU time and allocations
// per turn, and the live heap at the last candidate.
func BenchmarkRunTurnsFile(b *testing.B) {
	const candidates, tasks = 20, 500
	var specs [][3]string
	var sb strings.Builder
	for k := range tasks {
		specs = append(specs, [3]string{fmt.Sprintf("t%d", k), "s", "k"})
	}
	for c := range candidates {
		for k := range tasks {
			sb.WriteString(turnLine(fmt.Sprintf("c%04d", c), fmt.Sprintf("t%d", k), 0) + "\n")
		}
	}
	path := filepath.Join(b.TempDir(), "turns.jsonl")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	p := onePack(specs...)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Run(context.Background(), Request{
			Engine:    Config{Pack: p, Scorers: constScorer{}, Descriptions: map[scorer.ID]scorer.Description{"s": {ID: "s"}}},
			TurnsFile: path,
		}); err != nil {
			b.Fatal(err)
		}
	}
	turns := float64(b.N * candidates * tasks)
	b.ReportMetric(float64(cpuTime()-cpu0)/turns, "cpu_ns/turn")
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/turns, "allocs/turn")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/turns, "B/turn")
}
