package memo

import (
	"runtime"
	"sync"
	"weak"
)

// Cache maps a *K to the V built from it, holding the key weakly: an entry
// goes away once its key is unreachable. The zero Cache is ready to use; a
// Cache must not be copied after first use.
type Cache[K, V any] struct {
	mu sync.Mutex
	m  map[weak.Pointer[K]]*entry[V]
}

type entry[V any] struct {
	once sync.Once
	v    V
}

// Get returns the value cached for k, building it with build the first time.
// Concurrent callers with the same k wait for one build. A nil k is never
// cached: build runs every time. The value must not point back to k: the
// cache holds its values strongly, so such a k would never be collected.
func (c *Cache[K, V]) Get(k *K, build func(*K) V) V {
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

// Len is the number of live entries.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func (c *Cache[K, V]) forget(wp weak.Pointer[K]) {
	c.mu.Lock()
	delete(c.m, wp)
	c.mu.Unlock()
}
