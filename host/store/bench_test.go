package store

import (
	"context"
	"fmt"
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
