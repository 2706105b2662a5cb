package verify

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/store"
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
	in := finalizedInput(t, p)
	release := make(chan struct{})
	var hold sync.Once
	e, err := New(Config{Pack: p, Scorers: constScorer{}, Descriptions: map[scorer.ID]scorer.Description{"s": {ID: "s"}},
		ChunkSize: 1, BatchSize: 1, Workers: 1, Progress: func(int, int) { hold.Do(func() { <-release }) }})
	if err != nil {
		t.Fatal(err)
	}
	var read atomic.Int32
	e.chunkRead = func(int) { read.Add(1) }
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

// TestPassReadsChunksInParts: a pass reads, scores and finishes a chunk in
// chunkParts parts, so while the recorder is held (its first progress
// call blocks, with the first chunk written and the second finished) it
// has read at most chunksInFlight parts more — half the turns whole
// chunks would hold (docs/performance.md, "Verifying many small turns").
// Each chunk is still recorded whole, in one write: progress is reported
// at the chunks' ends, whether the turns end after a whole chunk, after a
// chunk's first part or inside it. The recorded rows are the same as with
// whole chunks.
func TestPassReadsChunksInParts(t *testing.T) {
	t.Parallel()
	const chunk = 4
	for _, n := range []int{40, 12, 10, 9, 2, 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			var tasks [][3]string
			for i := range n {
				tasks = append(tasks, [3]string{fmt.Sprintf("t%02d", i), "s", "k"})
			}
			p := onePack(tasks...)
			dir := t.TempDir()
			in := finalizedInput(t, p)
			st := openStore(t, filepath.Join(dir, "assay.db"))
			release := make(chan struct{})
			var hold sync.Once
			var mu sync.Mutex
			var progress []int
			e, err := New(Config{Pack: p, Scorers: constScorer{}, Descriptions: map[scorer.ID]scorer.Description{"s": {ID: "s"}},
				Store: st, ScorerVersion: "v", ChunkSize: chunk, BatchSize: 1, Workers: 1, Progress: func(done, _ int) {
					mu.Lock()
					progress = append(progress, done)
					mu.Unlock()
					hold.Do(func() { <-release })
				}})
			if err != nil {
				t.Fatal(err)
			}
			var read atomic.Int32
			var sizes []int
			e.chunkRead = func(turns int) {
				read.Add(int32(turns))
				mu.Lock()
				sizes = append(sizes, turns)
				mu.Unlock()
			}
			done := make(chan error, 1)
			go func() {
				out, err := e.Verify(context.Background(), in, Options{})
				if err == nil && out.Summary.N != n {
					err = fmt.Errorf("verified %d turns, want %d", out.Summary.N, n)
				}
				done <- err
			}()
			last, since := read.Load(), time.Now()
			for time.Since(since) < 300*time.Millisecond {
				time.Sleep(10 * time.Millisecond)
				if m := read.Load(); m != last {
					last, since = m, time.Now()
				}
			}
			// the two chunks finished, and chunksInFlight parts of half a chunk:
			// whole chunks would be 2*chunk + chunksInFlight*chunk.
			if want := int32(2*chunk + chunksInFlight*chunk/2); last > want {
				t.Errorf("turns read while the recorder is held = %d, want at most %d", last, want)

			}
			close(release)
			if err := <-done; err != nil {
				t.Fatalf("Verify = %v", err)
			}
			var wantProgress, wantSizes []int // a write a chunk; two parts of two turns a chunk
			for end := chunk; end-chunk < n; end += chunk {
				wantProgress = append(wantProgress, min(end, n))
			}
			for left := n; left > 0; left -= chunk / 2 {
				wantSizes = append(wantSizes, min(chunk/2, left))
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(wantProgress, progress); diff != "" {
				t.Errorf("progress, one call a chunk written (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantSizes, sizes); diff != "" {
				t.Errorf("parts read (-want +got):\n%s", diff)
			}
			run, err := st.BeginRun(context.Background(), store.RunKey{Candidate: "c", PackSHA256: p.SHA256, PackName: p.Name(), ScorerVersion: "v"}, false)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := st.TurnsDone(context.Background(), run.ID, run.Attempt)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != n {
				t.Errorf("turns recorded = %d, want %d", len(rows), n)
			}
		})
	}
}

// TestLongPassEndsWithACollection: a pass of collectAfterTurns turns of
// the pack's tasks runs one collection between its last chunk and its
// results in task order (so the end's large allocations reuse the pages
// its turns in flight held); a shorter pass runs none (docs/performance.md,
// "Verifying many small turns").
func TestLongPassEndsWithACollection(t *testing.T) {
	t.Parallel()
	for _, n := range []int{collectAfterTurns, collectAfterTurns - 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			var tasks [][3]string
			for i := range n {
				tasks = append(tasks, [3]string{fmt.Sprintf("t%05d", i), "s", "k"})
			}
			p := onePack(tasks...)
			in := finalizedInput(t, p)
			e, err := New(Config{Pack: p, Scorers: constScorer{}, Descriptions: map[scorer.ID]scorer.Description{"s": {ID: "s"}}})
			if err != nil {
				t.Fatal(err)
			}
			var collections int
			e.collect = func() { collections++ }
			out, err := e.Verify(context.Background(), in, Options{})
			if err != nil {
				t.Fatalf("Verify = %v", err)
			}
			if out.Summary.N != n {
				t.Fatalf("verified %d turns, want %d", out.Summary.N, n)
			}
			want := 0
			if n >= collectAfterTurns {
				want = 1
			}
			if collections != want {
				t.Errorf("collections after a pass of %d turns = %d, want %d", n, collections, want)
			}
		})
	}
}

// TestChunkPartsFor: a chunk is read in parts only when a part still fills
// a batch of every scorer the pack's turns call, so that parts never make
// more plugin calls of fewer cases (docs/performance.md, "Verifying many
// small turns"); New counts the upstream scorers too.
func TestChunkPartsFor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ chunk, batch, scorers, want int }{
		{256, 64, 1, 2}, {256, 64, 2, 2}, {256, 64, 3, 1}, {256, 64, 6, 1},
		{4, 1, 1, 2}, {4, 1, 2, 2}, {4, 1, 3, 1}, {1, 1, 1, 1}, {256, 64, 0, 2},
	} {
		if got := chunkPartsFor(c.chunk, c.batch, c.scorers); got != c.want {
			t.Errorf("chunkPartsFor(%d, %d, %d) = %d, want %d", c.chunk, c.batch, c.scorers, got, c.want)
		}
	}
	descs := map[scorer.ID]scorer.Description{"a": {ID: "a"}, "b": {ID: "b"}, "c": {ID: "c"}}
	for _, c := range []struct {
		scorers []string
		want    int
	}{{[]string{"a"}, 2}, {[]string{"a", "b"}, 2}, {[]string{"a", "b", "c"}, 1}} {
		var tasks [][3]string
		for i, id := range c.scorers {
			tasks = append(tasks, [3]string{fmt.Sprintf("t%d", i), id, "k"})
		}
		e, err := New(Config{Pack: onePack(tasks...), Scorers: constScorer{}, Descriptions: descs, ChunkSize: 4, BatchSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		if e.parts != c.want {
			t.Errorf("New with scorers %v: parts = %d, want %d", c.scorers, e.parts, c.want)
		}
	}
}
