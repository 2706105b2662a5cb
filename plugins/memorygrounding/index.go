package memorygrounding

import (
	"runtime"
	"slices"
	"sync"

	"github.com/assay-eval/assay/sdk"
)

// indexCache holds the memory index of each snapshot the scorer has seen,
// for as long as the snapshot lives.
type indexCache struct {
	cache sdk.SnapshotCache[*memoryIndex]
}

// memoryIndex is an inverted index of a snapshot's memory: content word ->
// the entries (by position, ascending, each once) that contain it.
type memoryIndex struct {
	postings map[string]*[]int32 // a pointer, so adding an entry is one look-up
	entries  int
}

// indexOf returns snap's memory index, building it on first use; every case
// of a batch that shares snap shares it. Cases scored concurrently wait for
// the one build instead of each building their own.
func (c *indexCache) indexOf(snap *sdk.Snapshot) *memoryIndex {
	return c.cache.Get(snap, func(snap *sdk.Snapshot) *memoryIndex { return buildIndex(snap.Memory) })
}

// shardMin is the fewest entries worth splitting across goroutines.
const shardMin = 2048

// buildIndex indexes entries, in shards on as many goroutines as there are
// processors when there are many.
func buildIndex(entries []sdk.MemoryEntry) *memoryIndex {
	n := min(runtime.GOMAXPROCS(0), len(entries)/shardMin)
	if n <= 1 {
		return &memoryIndex{postings: indexRange(entries, 0, len(entries)), entries: len(entries)}
	}
	shards := make([]map[string]*[]int32, n)
	var wg sync.WaitGroup
	for i := range shards {
		lo, hi := i*len(entries)/n, (i+1)*len(entries)/n
		wg.Go(func() { shards[i] = indexRange(entries, lo, hi) })
	}
	wg.Wait()
	// Shards hold ascending, disjoint entry ranges: appending them in order
	// keeps every posting list ascending.
	postings := shards[0]
	for _, shard := range shards[1:] {
		for w, p := range shard {
			if q := postings[w]; q != nil {
				*q = append(*q, *p...)
			} else {
				postings[w] = p
			}
		}
	}
	return &memoryIndex{postings: postings, entries: len(entries)}
}

// indexRange indexes entries[lo:hi] by their position in entries.
func indexRange(entries []sdk.MemoryEntry, lo, hi int) map[string]*[]int32 {
	postings := map[string]*[]int32{}
	var id int32
	add := func(w string) {
		p := postings[w]
		if p == nil {
			p = &[]int32{}
			postings[w] = p
		}
		if n := len(*p); n > 0 && (*p)[n-1] == id {
			return
		}
		*p = append(*p, id)
	}
	for i := lo; i < hi; i++ {
		e := &entries[i]
		id = int32(i)
		for _, part := range [...]string{e.Title, e.Body, e.SummaryL0, e.SummaryL1} {
			contentWords(part, add)
		}
		for _, tag := range e.Tags {
			contentWords(tag, add)
		}
	}
	return postings
}

// best finds the entry that shares the most of words (distinct content words
// of the answer) and the words it shares; ties go to the earliest entry. It
// reports -1 when no entry shares any word.
func (ix *memoryIndex) best(words []string) (entry int, shared []string) {
	if ix.entries == 0 {
		return -1, nil
	}
	counts := make([]int32, ix.entries)
	entry, top := -1, int32(0)
	for _, w := range words {
		p := ix.postings[w]
		if p == nil {
			continue
		}
		for _, e := range *p {
			counts[e]++
			if c := counts[e]; c > top || (c == top && int(e) < entry) {
				entry, top = int(e), c
			}
		}
	}
	if entry < 0 {
		return -1, nil
	}
	for _, w := range words {
		if p := ix.postings[w]; p == nil {
			continue
		} else if _, ok := slices.BinarySearch(*p, int32(entry)); ok {
			shared = append(shared, w)
		}
	}
	return entry, shared
}
