package kpi

import (
	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/sdk"
)

// A turn fits when every input is within the sizes the load-time estimate
// assumed (the sizes table and its defaults). Then an expression's estimate
// bounds its actual cost, and a check whose estimate is within Limits.Eval
// runs without per-operation cost tracking, which costs about twice the
// evaluation itself. Any input that does not fit makes every check of the
// turn run tracked, with the run-time limit.

// bound is the size the estimator assumed for a value at path.
func bound(path string, def uint64) int {
	if s, ok := sizes[path]; ok {
		return int(s)
	}
	return int(def)
}

// Lengths are compared in bytes, which are never fewer than the code points
// CEL counts, so a string that fits by bytes fits.
func strFits(s string) bool { return len(s) <= defaultStringSize }

func strsFit(path string, ss []string) bool {
	if len(ss) > bound(path, defaultListSize) {
		return false
	}
	for _, s := range ss {
		if !strFits(s) {
			return false
		}
	}
	return true
}

// dynFits checks a free-form value: the estimator bounds every dyn value
// (and every part of one) like a string.
func dynFits(v any) bool {
	switch x := v.(type) {
	case string:
		return strFits(x)
	case []any:
		if len(x) > defaultStringSize {
			return false
		}
		for _, e := range x {
			if !dynFits(e) {
				return false
			}
		}
	case map[string]any:
		return mapFits(x, defaultStringSize)
	}
	return true
}

func mapFits(m map[string]any, n int) bool {
	if len(m) > n {
		return false
	}
	for k, v := range m {
		if !strFits(k) || !dynFits(v) {
			return false
		}
	}
	return true
}

func turnFits(t *Turn) bool {
	if len(t.Answer) > bound("turn.answer", 0) || len(t.StreamedText) > bound("turn.streamed_text", 0) ||
		!strFits(t.Label) || !strFits(t.Persona) || !strFits(t.TaskID) || !strFits(t.TaskAction) ||
		!strsFit("turn.tools", t.Tools) || !strsFit("turn.phases", t.Phases) ||
		!strsFit("turn.error_messages", t.ErrorMessages) ||
		len(t.Events) > bound("turn.events", 0) || len(t.ToolCalls) > bound("turn.tool_calls", 0) {
		return false
	}
	for i := range t.Events {
		e := &t.Events[i]
		if !strFits(e.Type) || !strFits(e.Phase) || !strFits(e.EventType) || !strFits(e.ToolName) || !strFits(e.Text) {
			return false
		}
	}
	args := bound("turn.tool_calls.@items.args", 0)
	for i := range t.ToolCalls {
		c := &t.ToolCalls[i]
		if !strFits(c.Name) || !mapFits(c.Args, args) {
			return false
		}
	}
	return true
}

func taskFits(k *Task) bool {
	return strFits(k.Label) && strFits(k.Persona) && strFits(k.Scorer) &&
		strsFit("task.tags", k.Tags) && mapFits(k.KPIs, bound("task.kpis", 0))
}

func scorerFits(s *Scorer) bool {
	if len(s.Checks) > bound("scorer.checks", 0) {
		return false
	}
	for k := range s.Checks {
		if !strFits(k) {
			return false
		}
	}
	return true
}

// fitCache holds snapshotFits per snapshot, so that a snapshot shared by a
// batch's turns is walked once; a Set keeps one.
type fitCache = sdk.SnapshotCache[bool]

// snapshotFits reports whether s fits both as state and as before (their
// bounds are the same). A nil cache walks s every time.
func snapshotFits(s *companyos.Snapshot, cache *fitCache) bool {
	walk := func(s *companyos.Snapshot) bool { return walkSnapshot(s, "state") }
	if cache == nil || (len(s.Tasks) == 0 && len(s.Memory) == 0) {
		return walk(s)
	}
	return cache.Get(s, walk)
}

func walkSnapshot(s *companyos.Snapshot, v string) bool {
	if !strFits(s.CapturedAt) || len(s.Tasks) > bound(v+".tasks", 0) || len(s.Memory) > bound(v+".memory", 0) {
		return false
	}
	spec, notes := bound(v+".tasks.@items.specification", 0), bound(v+".tasks.@items.context_notes", 0)
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if !strFits(t.ID) || !strFits(t.Title) || len(t.Specification) > spec || !strFits(t.State) ||
			!strFits(t.OwnerPersona) || !strFits(t.CheckedOutBy) || !strFits(t.DueAt) || !strFits(t.CreatedAt) ||
			len(t.ContextNotes) > notes {
			return false
		}
		for _, n := range t.ContextNotes {
			if !strFits(n.At) || !strFits(n.Actor) || !strFits(n.Text) {
				return false
			}
		}
	}
	body := bound(v+".memory.@items.body", 0)
	for i := range s.Memory {
		m := &s.Memory[i]
		if !strFits(m.ID) || !strFits(m.Scope) || !strFits(m.Title) || len(m.Body) > body ||
			!strsFit(v+".memory.@items.tags", m.Tags) || !strFits(m.SummaryL0) || !strFits(m.SummaryL1) ||
			!strFits(m.Kind) || !strFits(m.CreatedAt) {
			return false
		}
	}
	return true
}

// fitsEstimate reports whether every input of a turn is within the sizes
// the cost estimate assumed.
func fitsEstimate(t *Turn, k *Task, sc *Scorer, state, before *companyos.Snapshot, cache *fitCache) bool {
	return turnFits(t) && taskFits(k) && scorerFits(sc) && snapshotFits(state, cache) && snapshotFits(before, cache)
}
