package sdk

import "github.com/assay-eval/assay/pkg/memo"

// SnapshotCache caches a value derived from a snapshot, such as an index of
// its tasks, for as long as the snapshot lives. Every case of a batch that
// carries the same snapshot carries the same *Snapshot, so a scorer that keeps
// a SnapshotCache builds the index once per batch:
//
//	type scorer struct{ ids *sdk.SnapshotCache[map[string]bool] }
//	ids := s.ids.Get(c.StateAfter, buildIDs)
//
// The zero value is ready to use; keep it behind a pointer.
type SnapshotCache[V any] = memo.Cache[Snapshot, V]
