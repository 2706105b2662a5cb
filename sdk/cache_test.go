package sdk

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// snap is a key of more than 16 bytes: the runtime may put a pointer-free
// object of 16 bytes or less in one tiny block with others, and a cleanup
// of such an object never runs while another object of its block lives
// (runtime.AddCleanup), which made TestCacheForgetsCollectedKeys fail when
// a parallel test's allocation shared the block. *sdk.Snapshot is larger.
type snap struct {
	n   int
	pad [2]int
}

// TestCacheBuildsOncePerKey: every caller with the same pointer shares one
// build, even concurrently; another pointer gets its own.
func TestCacheBuildsOncePerKey(t *testing.T) {
	t.Parallel()
	var c cache[snap, int]
	var builds atomic.Int32
	a, b := &snap{n: 1}, &snap{n: 2}
	build := func(s *snap) int { builds.Add(1); return s.n * 10 }
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if got := c.Get(a, build); got != 10 {
				t.Errorf("Get(a) = %d, want 10", got)
			}
		})
	}
	wg.Wait()
	if got := c.Get(b, build); got != 20 {
		t.Errorf("Get(b) = %d, want 20", got)
	}
	if got := builds.Load(); got != 2 {
		t.Errorf("builds = %d, want 2", got)
	}
	if got := c.Get(nil, func(*snap) int { return 7 }); got != 7 {
		t.Errorf("Get(nil) = %d, want 7", got)
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
}

// TestCacheForgetsCollectedKeys: the cache does not keep a key alive, and
// drops its entry once the key is collected.
func TestCacheForgetsCollectedKeys(t *testing.T) {
	t.Parallel()
	var c cache[snap, []byte]
	func() {
		s := &snap{n: 1}
		c.Get(s, func(*snap) []byte { return make([]byte, 1<<10) })
	}()
	deadline := time.Now().Add(5 * time.Second)
	for c.Len() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Len() = %d after the key was dropped, want 0", c.Len())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestSnapshotCacheForgetsBesideLiveAllocation: a snapshot dropped while a
// small object allocated right after it lives on is still forgotten. A
// pointer-free key of 16 bytes or less would share that object's tiny block
// and never be cleaned up; *Snapshot is neither.
func TestSnapshotCacheForgetsBesideLiveAllocation(t *testing.T) {
	var c SnapshotCache[int]
	var alive *[4]byte
	func() {
		s := &Snapshot{CapturedAt: "t0"}
		alive = new([4]byte)
		c.Get(s, func(*Snapshot) int { return 1 })
	}()
	deadline := time.Now().Add(5 * time.Second)
	for c.Len() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Len() = %d after the snapshot was dropped, want 0", c.Len())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(alive)
}
