package taskstate

import (
	"fmt"
	"strings"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/grade"
)

// KPI keys.
const (
	KeyTaskCreated    = "task_created"
	KeyAssignedTo     = "assigned_to"
	KeyHasDueAt       = "has_due_at"
	KeyPriorityMin    = "priority_min"
	KeySpecKeywords   = "spec_keywords"
	KeyTaskStateAfter = "task_state_after"
)

const tagStateNotChanged = "state_not_changed"

// description is built fresh for every caller, so nobody can change another's.
func description() sdk.Description {
	return sdk.Description{
		ID:      "task_state",
		Version: "1.0.0",
		KPIs: []sdk.KPI{
			{Key: KeyTaskCreated, ValueType: sdk.Bool, FailureTag: tagStateNotChanged,
				Description: "true: the turn created a task (false: it created none)"},
			{Key: KeyAssignedTo, ValueType: sdk.String, FailureTag: tagStateNotChanged,
				Description: "the target task's owner_persona or checked_out_by equals this persona (case-insensitive)"},
			{Key: KeyHasDueAt, ValueType: sdk.Bool, FailureTag: tagStateNotChanged,
				Description: "true: the target task has a due_at (false: it has none)"},
			{Key: KeyPriorityMin, ValueType: sdk.Number, FailureTag: tagStateNotChanged,
				Description: "the target task's priority is at least this number"},
			{Key: KeySpecKeywords, ValueType: sdk.StringList, FailureTag: tagStateNotChanged,
				Description: "fraction of the listed keywords found in the target task's title and specification"},
			{Key: KeyTaskStateAfter, ValueType: sdk.String, FailureTag: tagStateNotChanged,
				Description: "the target task's state equals this state after the turn (case-insensitive)"},
		},
		Needs: []sdk.Need{sdk.NeedStateBefore, sdk.NeedStateAfter, sdk.NeedTrace, sdk.NeedNoStreamedText, sdk.NeedNoToolArgs},
	}
}

// New returns the task_state scorer.
func New() sdk.Scorer { return newScorer(new(indexes)) }

// newScorer is the scorer with its snapshot indexes in ix.
func newScorer(ix *indexes) sdk.Scorer {
	return grade.NewScorer(description, func(s *grade.Sheet, c *sdk.Case) { checkCase(s, c, ix) })
}

// want is what the task asks of the target task; a nil field is not checked.
type want struct {
	created  *bool
	assigned *string
	dueAt    *bool
	priority *float64
	keywords []string
	hasKW    bool
	state    *string
}

// pending is a check worked out for one candidate task, not yet recorded.
type pending struct {
	key    string
	score  float64
	detail string
}

// checkCase records the checks of case c on s.
func checkCase(s *grade.Sheet, c *sdk.Case, ix *indexes) {
	w := read(s)
	found := findTargets(s, c, ix)

	if w.created != nil {
		createdCheck(s, *w.created, found)
	}
	if len(found.targets) == 0 {
		for _, key := range w.keys() {
			s.Fail(key, "no target task: "+found.why)
		}
		return
	}
	var best []pending
	bestScore, bestAt := -1.0, 0
	for i, t := range found.targets {
		checks := w.evaluate(t)
		if score := mean(checks); score > bestScore {
			best, bestScore, bestAt = checks, score, i
		}
	}
	id := found.targets[bestAt].ID
	suffix := ""
	if n := len(found.targets); n > 1 {
		suffix = fmt.Sprintf(" (best match of %d candidate tasks: %s)", n, strings.Join(ids(found.targets), ", "))
	}
	for _, p := range best {
		s.Score(p.key, p.score, p.detail+suffix, id)
	}
}

// read decodes the task's KPI values; a wrong type is recorded by the sheet.
func read(s *grade.Sheet) want {
	var w want
	if v, ok := s.Bool(KeyTaskCreated); ok {
		w.created = &v
	}
	if v, ok := s.String(KeyAssignedTo); ok {
		w.assigned = &v
	}
	if v, ok := s.Bool(KeyHasDueAt); ok {
		w.dueAt = &v
	}
	if v, ok := s.Number(KeyPriorityMin); ok {
		w.priority = &v
	}
	w.keywords, w.hasKW = s.StringList(KeySpecKeywords)
	if v, ok := s.String(KeyTaskStateAfter); ok {
		w.state = &v
	}
	return w
}

// keys are the KPI keys checked on the target task, in description order.
func (w want) keys() []string {
	var keys []string
	if w.assigned != nil {
		keys = append(keys, KeyAssignedTo)
	}
	if w.dueAt != nil {
		keys = append(keys, KeyHasDueAt)
	}
	if w.priority != nil {
		keys = append(keys, KeyPriorityMin)
	}
	if w.hasKW {
		keys = append(keys, KeySpecKeywords)
	}
	if w.state != nil {
		keys = append(keys, KeyTaskStateAfter)
	}
	return keys
}

// evaluate works out the checks of task t.
func (w want) evaluate(t *sdk.StateTask) []pending {
	var out []pending
	verdict := func(key string, ok bool, detail string) {
		score := 0.0
		if ok {
			score = 1
		}
		out = append(out, pending{key, score, detail})
	}
	n := name(t)
	if w.assigned != nil {
		a := strings.TrimSpace(*w.assigned)
		ok := strings.EqualFold(strings.TrimSpace(t.OwnerPersona), a) || strings.EqualFold(strings.TrimSpace(t.CheckedOutBy), a)
		verdict(KeyAssignedTo, ok, fmt.Sprintf("task %s is owned by %s and checked out by %s, want %q",
			n, orNone(t.OwnerPersona), orNone(t.CheckedOutBy), a))
	}
	if w.dueAt != nil {
		has := strings.TrimSpace(t.DueAt) != ""
		switch {
		case has && *w.dueAt:
			verdict(KeyHasDueAt, true, fmt.Sprintf("task %s is due at %s", n, t.DueAt))
		case !has && *w.dueAt:
			verdict(KeyHasDueAt, false, fmt.Sprintf("task %s has no due_at, want one", n))
		case has:
			verdict(KeyHasDueAt, false, fmt.Sprintf("task %s is due at %s, want no due_at (has_due_at is false)", n, t.DueAt))
		default:
			verdict(KeyHasDueAt, true, fmt.Sprintf("task %s has no due_at, as wanted", n))
		}
	}
	if w.priority != nil {
		if t.Priority == nil {
			verdict(KeyPriorityMin, false, fmt.Sprintf("task %s has no priority, want >= %v", n, *w.priority))
		} else {
			verdict(KeyPriorityMin, *t.Priority >= *w.priority,
				fmt.Sprintf("task %s has priority %v, want >= %v", n, *t.Priority, *w.priority))
		}
	}
	if w.hasKW {
		score, detail := grade.KeywordScore(fmt.Sprintf("the title and specification of task %s", n),
			t.Title+"\n"+t.Specification, w.keywords)
		out = append(out, pending{KeySpecKeywords, score, detail})
	}
	if w.state != nil {
		st := strings.TrimSpace(*w.state)
		verdict(KeyTaskStateAfter, strings.EqualFold(strings.TrimSpace(t.State), st),
			fmt.Sprintf("task %s is in state %s, want %q", n, orNone(t.State), st))
	}
	return out
}

// createdCheck records task_created: whether the turn created a task, or
// (want false) created none.
func createdCheck(s *grade.Sheet, want bool, f found) {
	var created []*sdk.StateTask
	if f.created {
		created = f.targets
	}
	switch {
	case want && len(created) > 0:
		s.Pass(KeyTaskCreated, fmt.Sprintf("task %s was created during the turn", name(created[0])), ids(created)...)
	case want && len(f.targets) > 0:
		s.Fail(KeyTaskCreated, fmt.Sprintf("no task was created; the turn names existing task %s", name(f.targets[0])), ids(f.targets)...)
	case want:
		s.Fail(KeyTaskCreated, "no task was created: "+f.why)
	case len(created) > 0:
		s.Fail(KeyTaskCreated, fmt.Sprintf("task %s was created during the turn, want none (task_created is false)", name(created[0])), ids(created)...)
	case f.unknown:
		s.Fail(KeyTaskCreated, "cannot tell whether a task was created: "+f.why)
	default:
		s.Pass(KeyTaskCreated, "no task was created, as wanted (task_created is false)")
	}
}

func mean(ps []pending) float64 {
	if len(ps) == 0 {
		return 0
	}
	var sum float64
	for _, p := range ps {
		sum += p.score
	}
	return sum / float64(len(ps))
}

// name is how a detail names a task: 'Title' (id).
func name(t *sdk.StateTask) string {
	if t.Title == "" {
		return t.ID
	}
	return fmt.Sprintf("'%s' (%s)", t.Title, t.ID)
}

func ids(ts []*sdk.StateTask) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "nobody"
	}
	return fmt.Sprintf("%q", s)
}
