package taskeval

import (
	"os"
	"testing"
	"time"
)

// BenchmarkEvaluateFull scores a task with every evidence group over its
// cap: decode-free bundle building, signals, blend and verification.
func BenchmarkEvaluateFull(b *testing.B) {
	task := taskWith(200, nil)
	task.Documents[0].Content = string(make([]byte, 10000))
	start := time.Now()
	for i := 0; i < b.N; i++ {
		bundle := BuildBundle(task, "er-1")
		sig := CollectSignals(task)
		r, err := Evaluate(task.TaskID, DeterministicScores(sig), nil, sig.Explain(), bundle)
		if err != nil {
			b.Fatal(err)
		}
		if err := ValidateBundle(r.EvidenceBundle); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/task")
}

// BenchmarkDecodeFile decodes the example input file with positions.
func BenchmarkDecodeFile(b *testing.B) {
	data, err := os.ReadFile("testdata/task.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, diags := DecodeFile("task.json", data); diags != nil {
			b.Fatal(diags)
		}
	}
}
