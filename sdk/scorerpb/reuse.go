package scorerpb

import (
	"sync"

	"github.com/assay-eval/assay/sdk"
)

// Decoder is UnmarshalCases for a plugin's whole life. The host sends each
// batch's tasks and snapshots whole, and the same ones come back batch
// after batch (every candidate answers the same tasks; a run's turns often
// share their snapshots). A Decoder keeps what it decoded, by its bytes,
// and gives a later batch with the same bytes the same values: one
// *sdk.Snapshot and one task, as in-process scorers get them, so a
// scorer's sdk.SnapshotCache builds its index once, not once a batch. What
// it keeps is bounded (reuseLimit bytes of encodings, twice over); the
// values are shared, so scorers treat them as read-only, as they must
// in-process. The zero Decoder is ready to use and safe for concurrent use.
type Decoder struct {
	// NoToolArgs is set for a scorer that declares sdk.NeedNoToolArgs, or
	// marks a KPI ArgsRead (ReadsListedArgs): a tool call sent without
	// arguments gets a nil Args, as StripCase leaves it in process, not
	// an empty map (a scorer that reads only listed arguments reads no
	// call without any). Arguments a host sends anyway (one before SDK
	// 1.3, or 1.4) are decoded as always.
	NoToolArgs bool

	snaps reuse[*sdk.Snapshot]
	tasks reuse[sdk.Task]
	// shared holds what earlier batches' strings and boxed argument values
	// left (*shared), for the next batch to start from: the names and
	// values that repeat within a batch mostly repeat across batches too.
	shared sync.Pool
}

// reuseLimit bounds the bytes of the encodings one generation of a reuse
// cache keeps (see reuse).
const reuseLimit = 1 << 20

// reuse maps encodings to what they decoded to. It keeps two generations:
// when the current one passes reuseLimit bytes of keys it becomes the old
// one and the previous old one is dropped; a hit in the old generation
// moves the entry to the current one. So what every batch uses stays, and
// at most 2×reuseLimit bytes of keys (and what they decoded to) are held.
type reuse[V any] struct {
	mu       sync.Mutex
	cur, old map[string]V
	size     int // bytes of cur's keys
}

func (r *reuse[V]) get(b []byte) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.cur[string(b)]; ok {
		return v, true
	}
	if v, ok := r.old[string(b)]; ok {
		delete(r.old, string(b))
		r.add(string(b), v)
		return v, true
	}
	var zero V
	return zero, false
}

// put keeps v for b unless b already has a value, and returns the value
// kept (a concurrent batch may have decoded the same bytes first).
func (r *reuse[V]) put(b []byte, v V) V {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w, ok := r.cur[string(b)]; ok {
		return w
	}
	if len(b) <= reuseLimit {
		r.add(string(b), v)
	}
	return v
}

func (r *reuse[V]) add(k string, v V) {
	if r.size+len(k) > reuseLimit {
		r.old, r.cur, r.size = r.cur, nil, 0
	}
	if r.cur == nil {
		r.cur = map[string]V{}
	}
	r.cur[k] = v
	r.size += len(k)
}
