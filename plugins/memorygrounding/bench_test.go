package memorygrounding

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/plugins/internal/gradetest"
	"github.com/assay-eval/assay/sdk"
)

// benchMemory builds n memory entries of about 60 words each from a
// vocabulary of 20,000 words, the shape of a busy company's shared memory.
func benchMemory(n int) []sdk.MemoryEntry {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("word%05d", i)
	}
	text := func(words int) string {
		var b strings.Builder
		for range words {
			// A skewed pick, so some words are common and most are rare.
			b.WriteString(vocab[int(float64(len(vocab))*r.Float64()*r.Float64())])
			b.WriteString(" the ")
		}
		return b.String()
	}
	out := make([]sdk.MemoryEntry, n)
	for i := range out {
		out[i] = sdk.MemoryEntry{
			ID: fmt.Sprintf("m-%d", i), Title: text(5), Body: text(40), SummaryL0: text(8), SummaryL1: text(8),
			Tags: []string{"eval", "release"},
		}
	}
	return out
}

// BenchmarkMemoryGrounding10k scores turns against one snapshot of 10,000
// memory entries shared by the batch: the index is built once (ms/index),
// then each turn costs ms/turn.
func BenchmarkMemoryGrounding10k(b *testing.B) {
	memory := benchMemory(10000)
	kpis := gradetest.KPIs(b, map[string]any{"memory_tool_called": true, "grounded_in_memory": true, "answer_keywords": []string{"release", "harness"}})
	const turns = 200
	cases := make([]*sdk.Case, turns)
	for i := range cases {
		e := memory[(i*37)%len(memory)]
		cases[i] = &sdk.Case{
			ID:   fmt.Sprint(i),
			Task: sdk.Task{Label: "memory", KPIs: kpis},
			Turn: sdk.Turn{
				ToolCalls: []sdk.ToolCall{{Name: "memory_search"}},
				Answer:    "Recent work on the release harness: " + e.Body + " " + e.SummaryL0,
			},
		}
	}
	ixs := new(indexCache)
	s := newScorer(ixs)
	ctx := context.Background()
	var indexMS float64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		snap := &sdk.Snapshot{Memory: memory} // a new batch: a new snapshot to index
		for _, c := range cases {
			c.StateAfter = snap
		}
		b.StartTimer()
		t0 := time.Now()
		ixs.indexOf(snap)
		indexMS += float64(time.Since(t0).Microseconds()) / 1000
		for _, c := range cases {
			r, err := s.Score(ctx, c)
			if err != nil || r.Score < 1 {
				b.Fatalf("Score(%s) = %+v, %v; want a grounded turn", c.ID, r, err)
			}
		}
	}
	b.StopTimer()
	perTurn := (float64(b.Elapsed().Microseconds())/1000 - indexMS) / float64(b.N*turns)
	b.ReportMetric(perTurn, "ms/turn")
	b.ReportMetric(indexMS/float64(b.N), "ms/index")
	b.ReportMetric(0, "ns/op")
}
