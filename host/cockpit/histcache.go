package cockpit

import (
	"context"
	"sync"
	"time"

	"github.com/assay-eval/assay/host/store"
)

// histCacheSize bounds how many completed runs' histograms are kept.
const histCacheSize = 1024

// histCache keeps the turn-score histograms of completed runs: their turns
// no longer change (a rerun updates the run's updated_at, which is part of
// the key), so the run page need not scan a large run's turns again.
type histCache struct {
	mu sync.Mutex
	m  map[int64]histEntry
}

type histEntry struct {
	updated time.Time
	attempt int
	bins    []int
}

func newHistCache() *histCache { return &histCache{m: map[int64]histEntry{}} }

// get is the run's histogram, from the cache when the run completed and
// has not changed since; a nil cache always reads the database.
func (h *histCache) get(ctx context.Context, st *store.Store, r store.RunRow) ([]int, error) {
	cacheable := h != nil && r.Status == store.RunCompleted
	if cacheable {
		h.mu.Lock()
		e, ok := h.m[r.ID]
		h.mu.Unlock()
		if ok && e.updated.Equal(r.UpdatedAt) && e.attempt == r.Attempt {
			return e.bins, nil
		}
	}
	bins, err := st.ScoreHistogram(ctx, r.ID, r.Attempt, histBins)
	if err != nil || !cacheable {
		return bins, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.m) >= histCacheSize {
		clear(h.m)
	}
	h.m[r.ID] = histEntry{updated: r.UpdatedAt, attempt: r.Attempt, bins: bins}
	return bins, nil
}
