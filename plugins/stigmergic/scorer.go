package stigmergic

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/grade"
)

// KPI keys.
const (
	KeyNoteWritten  = "note_written"
	KeyNoteKeywords = "note_keywords"
)

const tagStateNotChanged = "state_not_changed"

// description is built fresh for every caller, so nobody can change another's.
func description() sdk.Description {
	return sdk.Description{
		ID:      "stigmergic",
		Version: "1.0.0",
		KPIs: []sdk.KPI{
			{Key: KeyNoteWritten, ValueType: sdk.Bool, FailureTag: tagStateNotChanged,
				Description: "true: the turn added a context note to a task or called a tool whose name contains \"stigmergic\" (false: neither)"},
			{Key: KeyNoteKeywords, ValueType: sdk.StringList, FailureTag: tagStateNotChanged,
				Description: "fraction of the listed keywords found in the text of the context notes added during the turn"},
		},
		Needs: []sdk.Need{sdk.NeedStateBefore, sdk.NeedStateAfter, sdk.NeedTrace, sdk.NeedNoStreamedText, sdk.NeedNoToolArgs},
	}
}

// New returns the stigmergic scorer.
func New() sdk.Scorer {
	notes := new(noteCounts)
	return grade.NewScorer(description, func(s *grade.Sheet, c *sdk.Case) { checkCase(s, c, notes) })
}

// checkCase records the checks of case c on s.
func checkCase(s *grade.Sheet, c *sdk.Case, counts *noteCounts) {
	want, checkWritten := s.Bool(KeyNoteWritten)
	kws, checkKeywords := s.StringList(KeyNoteKeywords)
	if !checkWritten && !checkKeywords {
		return
	}
	notes, tasks := newNotes(s, c, counts)
	if checkWritten {
		var tools []string
		for _, call := range c.Turn.ToolCalls {
			if strings.Contains(strings.ToLower(call.Name), "stigmergic") && !slices.Contains(tools, call.Name) {
				tools = append(tools, call.Name)
			}
		}
		written(s, want, notes, tasks, tools)
	}
	if checkKeywords {
		texts := make([]string, len(notes))
		for i, n := range notes {
			texts[i] = n.Text
		}
		where := fmt.Sprintf("the %s added during the turn", grade.Count(len(notes), "context note", "context notes"))
		if len(notes) == 0 {
			where = "the new context notes (none were added)"
		}
		s.KeywordCheck(KeyNoteKeywords, where, strings.Join(texts, "\n"), kws, tasks...)
	}
}

func written(s *grade.Sheet, want bool, notes []sdk.Note, tasks, tools []string) {
	var did []string
	if len(notes) > 0 {
		on := "tasks"
		if len(tasks) == 1 {
			on = "task"
		}
		did = append(did, fmt.Sprintf("%s added on %s %s", grade.Count(len(notes), "context note", "context notes"), on, strings.Join(tasks, ", ")))
	}
	if len(tools) > 0 {
		did = append(did, "stigmergic tools called: "+strings.Join(tools, ", "))
	}
	evidence := append(slices.Clone(tasks), tools...)
	switch {
	case len(did) > 0 && want:
		s.Pass(KeyNoteWritten, strings.Join(did, "; "), evidence...)
	case want:
		s.Fail(KeyNoteWritten, `no context note was added to any task and no tool whose name contains "stigmergic" was called`)
	case len(did) > 0:
		s.Fail(KeyNoteWritten, strings.Join(did, "; ")+"; want none (note_written is false)", evidence...)
	default:
		s.Pass(KeyNoteWritten, "no context note added and no stigmergic tool called, as wanted (note_written is false)")
	}
}

// newNotes returns the context notes added during the turn, in state_after
// order, and the ids of the tasks they were added to.
func newNotes(s *grade.Sheet, c *sdk.Case, counts *noteCounts) ([]sdk.Note, []string) {
	after := c.StateAfter
	if after == nil {
		s.Diag("no state_after snapshot: cannot look for context notes added during the turn")
		return nil, nil
	}
	var notes []sdk.Note
	var tasks []string
	add := func(t *sdk.StateTask, n sdk.Note) {
		notes = append(notes, n)
		if len(tasks) == 0 || tasks[len(tasks)-1] != t.ID {
			tasks = append(tasks, t.ID)
		}
	}
	switch {
	case c.StateBefore != nil:
		before := counts.of(c.StateBefore)
		for i := range after.Tasks {
			t := &after.Tasks[i]
			old := before[t.ID]
			var used map[sdk.Note]int
			for _, n := range t.ContextNotes {
				if used[n] < old[n] {
					if used == nil {
						used = map[sdk.Note]int{}
					}
					used[n]++
					continue
				}
				add(t, n)
			}
		}
	case !c.StartedAt.IsZero() || !c.FinishedAt.IsZero():
		bad := 0
		for i := range after.Tasks {
			t := &after.Tasks[i]
			for _, n := range t.ContextNotes {
				at, err := time.Parse(time.RFC3339Nano, n.At)
				if err != nil {
					bad++
					continue
				}
				if (c.StartedAt.IsZero() || !at.Before(c.StartedAt)) && (c.FinishedAt.IsZero() || !at.After(c.FinishedAt)) {
					add(t, n)
				}
			}
		}
		if bad > 0 {
			s.Diag("context notes in state_after whose at is not an RFC 3339 time: %d; they were not matched against the turn's window", bad)
		}
	default:
		s.Diag("no state_before snapshot and no turn start or finish time: cannot tell new context notes from old")
	}
	return notes, tasks
}

// noteCounts caches each snapshot's notes by task, for the scorer's lifetime
// of that snapshot.
type noteCounts struct {
	cache sdk.SnapshotCache[map[string]map[sdk.Note]int]
}

// of counts the context notes of each task of snap, by task id; it is
// built once per snapshot and shared by the batch.
func (n *noteCounts) of(snap *sdk.Snapshot) map[string]map[sdk.Note]int {
	return n.cache.Get(snap, func(snap *sdk.Snapshot) map[string]map[sdk.Note]int {
		m := make(map[string]map[sdk.Note]int, len(snap.Tasks))
		for _, t := range snap.Tasks {
			if len(t.ContextNotes) == 0 {
				continue
			}
			counts := m[t.ID]
			if counts == nil {
				counts = map[sdk.Note]int{}
				m[t.ID] = counts
			}
			for _, n := range t.ContextNotes {
				counts[n]++
			}
		}
		return m
	})
}
