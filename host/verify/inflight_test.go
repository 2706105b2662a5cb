package verify

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/scorer"
)

// TestPassBoundsChunksInFlight: while the recorder is held (its first
// progress call blocks, with one chunk written and the next finished), a
// pass reads at most chunksInFlight more chunks: the chunks in front of a
// slow write wait unread instead of each holding its turns, parsed traces
// and results (docs/performance.md, "Verifying many small turns"). The
// channels between the stages alone let it read four more than that.
func TestPassBoundsChunksInFlight(t *testing.T) {
	t.Parallel()
	var tasks [][3]string
	for i := range 40 {
		tasks = append(tasks, [3]string{fmt.Sprintf("t%02d", i), "s", "k"})
	}
	p := onePack(tasks...)
	tr := filepath.Join(t.TempDir(), "trace.ndjson")
	writeFile(t, tr, `{"type":"done","reply":"ok","finalized":true}`+"\n")
	in := &Input{Candidate: "c"}
	for _, task := range p.Tasks {
		in.Turns = append(in.Turns, TurnSpec{Candidate: "c", Label: task.Label, TracePath: tr, Pos: diag.Pos{File: tr}})
	}
	release := make(chan struct{})
	var hold sync.Once
	e, err := New(Config{Pack: p, Scorers: constScorer{}, Descriptions: map[scorer.ID]scorer.Description{"s": {ID: "s"}},
		ChunkSize: 1, BatchSize: 1, Workers: 1, Progress: func(int, int) { hold.Do(func() { <-release }) }})
	if err != nil {
		t.Fatal(err)
	}
	var read atomic.Int32
	e.chunkRead = func() { read.Add(1) }
	done := make(chan error, 1)
	go func() {
		out, err := e.Verify(context.Background(), in, Options{})
		if err == nil && out.Summary.N != len(p.Tasks) {
			err = fmt.Errorf("verified %d turns, want %d", out.Summary.N, len(p.Tasks))
		}
		done <- err
	}()
	// Wait until the pass stops reading (the count stays the same for a while).
	last, since := read.Load(), time.Now()
	for time.Since(since) < 300*time.Millisecond {
		time.Sleep(10 * time.Millisecond)
		if n := read.Load(); n != last {
			last, since = n, time.Now()
		}
	}
	if want := int32(2 + chunksInFlight); last > want {
		t.Errorf("chunks read while the recorder is held = %d, want at most %d", last, want)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("Verify = %v", err)
	}
}
