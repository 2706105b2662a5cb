package taskstate

import (
	"fmt"
	"time"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/grade"
)

// found is the outcome of the target search.
type found struct {
	targets []*sdk.StateTask // in state_after order
	created bool             // the targets were created during the turn
	unknown bool             // the snapshots cannot say whether a task was created
	why     string           // why there is no target (or no created one)
}

// findTargets finds the candidate target tasks of case c (see the package doc).
func findTargets(s *grade.Sheet, c *sdk.Case, idx *indexes) found {
	after := c.StateAfter
	if after == nil {
		s.Diag("no state_after snapshot: cannot look for the task the turn created or changed")
		return found{unknown: true, why: "no state_after snapshot"}
	}
	var f found
	windowKnown := !c.StartedAt.IsZero() || !c.FinishedAt.IsZero()
	switch {
	case c.StateBefore != nil:
		before := idx.idSet(c.StateBefore)
		for i := range after.Tasks {
			if _, ok := before[after.Tasks[i].ID]; !ok {
				f.targets = append(f.targets, &after.Tasks[i])
			}
		}
		f.why = "every task in state_after was already in state_before"
	case windowKnown:
		ix := idx.createdIndex(after)
		for i, at := range ix.at {
			if !at.IsZero() && within(at, c.StartedAt, c.FinishedAt) {
				f.targets = append(f.targets, &after.Tasks[i])
			}
		}
		f.why = fmt.Sprintf("no task in state_after was created within the turn (%s to %s)",
			stamp(c.StartedAt), stamp(c.FinishedAt))
		if ix.bad > 0 {
			s.Diag("tasks in state_after whose created_at is not an RFC 3339 time: %d (first: %s); they were not matched against the turn's window",
				ix.bad, ix.firstBad)
		}
	default:
		f.unknown = true
		f.why = "no state_before snapshot and no turn start or finish time to tell new tasks from old"
	}
	if len(f.targets) > 0 {
		f.created = true
		return f
	}
	if id := c.Turn.TaskID; id != "" {
		for i := range after.Tasks {
			if after.Tasks[i].ID == id {
				f.targets = []*sdk.StateTask{&after.Tasks[i]}
				// Without a way to tell new from old, the task the turn
				// names is taken as the one it created.
				f.created = f.unknown
				f.unknown = false
				return f
			}
		}
		f.why += fmt.Sprintf("; the trace's task_id %q is not in state_after", id)
	} else {
		f.why += "; the trace names no task_id"
	}
	return f
}

func within(t, start, end time.Time) bool {
	if !start.IsZero() && t.Before(start) {
		return false
	}
	if !end.IsZero() && t.After(end) {
		return false
	}
	return true
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format(time.RFC3339)
}

// indexes are the scorer's per-snapshot look-ups, each built once per
// snapshot and shared by every case of the batch that carries it.
type indexes struct {
	ids     sdk.SnapshotCache[map[string]struct{}]
	created sdk.SnapshotCache[*createdAt]
}

// idSet is the set of task ids of snapshot snap.
func (idx *indexes) idSet(snap *sdk.Snapshot) map[string]struct{} {
	return idx.ids.Get(snap, func(snap *sdk.Snapshot) map[string]struct{} {
		set := make(map[string]struct{}, len(snap.Tasks))
		for _, t := range snap.Tasks {
			set[t.ID] = struct{}{}
		}
		return set
	})
}

// createdAt holds each task's parsed created_at (zero when absent or not a
// time), in snapshot order.
type createdAt struct {
	at       []time.Time
	bad      int
	firstBad string
}

func (idx *indexes) createdIndex(snap *sdk.Snapshot) *createdAt {
	return idx.created.Get(snap, func(snap *sdk.Snapshot) *createdAt {
		ix := &createdAt{at: make([]time.Time, len(snap.Tasks))}
		for i, t := range snap.Tasks {
			if t.CreatedAt == "" {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, t.CreatedAt)
			if err != nil {
				if ix.bad == 0 {
					ix.firstBad = fmt.Sprintf("task %s: %q", t.ID, t.CreatedAt)
				}
				ix.bad++
				continue
			}
			ix.at[i] = at
		}
		return ix
	})
}
