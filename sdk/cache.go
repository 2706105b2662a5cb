package sdk

import (
	"runtime"
	"sync"
	"weak"
)

// SnapshotCache caches a value derived from a snapshot, such as an index of
// its tasks, for as long as the snapshot lives. Every case of a batch that
// carries the same snapshot carries the same *Snapshot, so a scorer that keeps
// a SnapshotCache builds the index once per batch:
//
//	type scorer struct{ ids *sdk.SnapshotCache[map[string]bool] }
//	ids := s.ids.Get(c.StateAfter, buildIDs)
//
// The zero value is ready to use; keep it behind a pointer.
type SnapshotCache[V any] struct{ c cache[Snapshot, V] }

// Get returns the value cached for snapshot s, building it with build the
// first time. Concurrent callers with the same s wait for one build. A nil s
// is never cached: build runs every time. The value must not point back to
// s, or s would never be collected.
func (c *SnapshotCache[V]) Get(s *Snapshot, build func(*Snapshot) V) V { return c.c.Get(s, build) }

// Len is the number of snapshots with a cached value that are still alive.
func (c *SnapshotCache[V]) Len() int { return c.c.Len() }

// cache maps a *K to the V built from it, holding the key weakly: an entry
// goes away once its key is unreachable. The zero cache is ready to use; a
// cache must not be copied after first use.
type cache[K, V any] struct {
	mu sync.Mutex
	m  map[weak.Pointer[K]]*entry[V]
}

type entry[V any] struct {
	once sync.Once
	v    V
}

func (c *cache[K, V]) Get(k *K, build func(*K) V) V {
	if k == nil {
		return build(k)
	}
	wp := weak.Make(k)
	c.mu.Lock()
	e, ok := c.m[wp]
	if !ok {
		if c.m == nil {
			c.m = map[weak.Pointer[K]]*entry[V]{}
		}
		e = &entry[V]{}
		c.m[wp] = e
		runtime.AddCleanup(k, c.forget, wp)
	}
	c.mu.Unlock()
	e.once.Do(func() { e.v = build(k) })
	return e.v
}

func (c *cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func (c *cache[K, V]) forget(wp weak.Pointer[K]) {
	c.mu.Lock()
	delete(c.m, wp)
	c.mu.Unlock()
}
