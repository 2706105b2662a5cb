package taskstate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/assay-eval/assay/plugins/internal/gradetest"
	"github.com/assay-eval/assay/sdk"
)

// BenchmarkTaskState5k scores turns against before/after snapshots of 5,000
// tasks shared by the batch, half by the before/after diff and half by the
// turn's window without a before snapshot.
func BenchmarkTaskState5k(b *testing.B) {
	const n = 5000
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tasks := make([]sdk.StateTask, n)
	for i := range tasks {
		tasks[i] = sdk.StateTask{
			ID: fmt.Sprintf("t-%d", i), Title: fmt.Sprintf("Task %d", i), Specification: "routine work on the build",
			State: "open", OwnerPersona: "cto", Priority: prio(float64(i % 10)), CreatedAt: base.Add(time.Duration(i) * time.Hour).Format(time.RFC3339),
		}
	}
	start := base.Add(n * time.Hour)
	created := sdk.StateTask{
		ID: "new", Title: "Investigate build", Specification: "production build blocker, acceptance criteria",
		State: "open", OwnerPersona: "qa-release-lead", Priority: prio(8), DueAt: "2026-12-01T00:00:00Z",
		CreatedAt: start.Add(time.Minute).Format(time.RFC3339),
	}
	kpis := gradetest.KPIs(b, release)
	const turns = 200
	ix := new(indexes)
	s := newScorer(ix)
	ctx := context.Background()
	var indexMS float64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		before := &sdk.Snapshot{Tasks: tasks}
		after := &sdk.Snapshot{Tasks: append(append([]sdk.StateTask{}, tasks[:n/2]...), append([]sdk.StateTask{created}, tasks[n/2:]...)...)}
		cases := make([]*sdk.Case, turns)
		for i := range cases {
			cases[i] = &sdk.Case{ID: fmt.Sprint(i), Task: sdk.Task{Label: "task", KPIs: kpis}, StateAfter: after}
			if i%2 == 0 {
				cases[i].StateBefore = before
			} else {
				cases[i].StartedAt, cases[i].FinishedAt = start, start.Add(5*time.Minute)
			}
		}
		b.StartTimer()
		t0 := time.Now()
		ix.idSet(before)
		ix.createdIndex(after)
		indexMS += float64(time.Since(t0).Microseconds()) / 1000
		for _, c := range cases {
			r, err := s.Score(ctx, c)
			if err != nil || r.Score < 1 {
				b.Fatalf("Score(%s) = %+v, %v; want the created task found", c.ID, r, err)
			}
		}
	}
	b.StopTimer()
	perTurn := (float64(b.Elapsed().Microseconds())/1000 - indexMS) / float64(b.N*turns)
	b.ReportMetric(perTurn, "ms/turn")
	b.ReportMetric(indexMS/float64(b.N), "ms/index")
	b.ReportMetric(0, "ns/op")
}
