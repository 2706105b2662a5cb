package verify

import (
	"math"
	"slices"
	"unsafe"

	"github.com/assay-eval/assay/host/score"
)

// repeats are the checks, failure tags and scores a pass has kept most
// recently. A result kept for the summary points at an earlier result's
// when its own are equal — strings by content, numbers bit for bit — so
// that 10,000 results saying the same thing hold it once rather than
// 10,000 times (docs/performance.md, "Verifying many small turns", eighth
// round). What a result says is unchanged; only what it shares.
//
// Every shared slice is capacity-clipped, so appending to one result's
// checks or tags copies them; nothing in assay writes into a result's
// checks, tags or scores once it is made.
type repeats struct {
	checks ring[[]CheckResult]
	tags   ring[[]string]
	nums   ring[*float64]
	rests  ring[*keptRest]
	lists  ring[*keptLists]
}

// repeatWays is how many distinct values of each kind are remembered: a
// pass alternates among a few (its tasks' scorers, a passed and a failed
// check); a value not among them is kept as it is.
const repeatWays = 8

// ring is the last repeatWays values of one kind a pass kept; the oldest
// is replaced first.
type ring[T any] struct {
	vals [repeatWays]T
	next int // the entry add replaces
}

// find is the first value kept for which same holds.
func (r *ring[T]) find(same func(T) bool) (T, bool) {
	for _, v := range r.vals {
		if same(v) {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// add remembers v in place of the oldest value kept.
func (r *ring[T]) add(v T) { r.vals[r.next], r.next = v, (r.next+1)%repeatWays }

// share points r's checks, failure tags and scores at equal ones kept
// before, and remembers those that were not.
func (s *repeats) share(r *TurnResult) {
	r.Checks = shareSlice(&s.checks, r.Checks, sameChecks)
	r.FailureTags = shareSlice(&s.tags, r.FailureTags, slices.Equal[[]string])
	for _, f := range [...]**float64{&r.ProcessScore, &r.KPIScore, &r.TurnScore, &r.LatencyS, &r.CostUSD} {
		*f = s.shareNum(*f)
	}
}

// shareSlice is an equal one of the slices kept, or xs, capacity-clipped,
// remembered in place of the oldest.
func shareSlice[T any](kept *ring[[]T], xs []T, equal func(a, b []T) bool) []T {
	if len(xs) == 0 {
		return xs
	}
	if k, ok := kept.find(func(k []T) bool { return equal(k, xs) }); ok {
		return k
	}
	xs = slices.Clip(xs)
	kept.add(xs)
	return xs
}

func sameChecks(a, b []CheckResult) bool { return slices.EqualFunc(a, b, sameCheck) }

func (s *repeats) shareNum(f *float64) *float64 {
	if f == nil {
		return nil
	}
	bits := math.Float64bits(*f)
	if kept, ok := s.nums.find(func(k *float64) bool { return k != nil && math.Float64bits(*k) == bits }); ok {
		return kept
	}
	s.nums.add(f)
	return f
}

// sameCheck reports whether a and b say the same: every field equal, the
// score bit for bit (0 and -0 are written differently), the evidence
// element by element (nil and empty alike are left out of the file, but
// are kept apart here all the same).
func sameCheck(a, b CheckResult) bool {
	return a.Name == b.Name && a.Source == b.Source && math.Float64bits(a.Score) == math.Float64bits(b.Score) &&
		a.Passed == b.Passed && a.Detail == b.Detail && a.FailureTag == b.FailureTag &&
		(a.Evidence == nil) == (b.Evidence == nil) && slices.Equal(a.Evidence, b.Evidence)
}

// keptResult is a TurnResult as a pass keeps it for the summary: 72
// bytes instead of 312. What every result of a task's scorer says alike
// (its candidate, persona, status, scorer, diagnostics and states) is in a
// keptRest, and its checks and failure tags in a keptLists, each shared
// with the results before it that have the same; its label is not kept at
// all: a result is kept under its turn's key (passResults), whose label it
// has. result gives the TurnResult back, field for field; weight and slice
// tags, which are the task's, are not kept (inTaskOrder sets them).
type keptResult struct {
	scores           [5]*float64 // process, KPI, turn, latency, cost
	lists            *keptLists
	rest             *keptRest
	epoch, toolCalls int32 // a turn has at most trace.MaxToolCalls tool calls
	finalized, erred bool
}

// keptLists are a kept result's checks and failure tags.
type keptLists struct {
	checks      []CheckResult
	failureTags []string
}

// sameSlice reports whether a and b are the same slice: nil or not alike,
// the same length and the same array. share makes the equal lists of a
// pass's results one slice, so results that say the same share one
// keptLists without comparing what the lists hold again.
func sameSlice[T any](a, b []T) bool {
	return (a == nil) == (b == nil) && len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

type keptRest struct {
	candidate, persona      string
	status                  score.Status
	scorer                  ScorerRef
	diagnostics             []string
	stateBefore, stateAfter string
}

func (a *keptRest) same(b *keptRest) bool {
	return a.candidate == b.candidate && a.persona == b.persona && a.status == b.status && a.scorer == b.scorer &&
		(a.diagnostics == nil) == (b.diagnostics == nil) && slices.Equal(a.diagnostics, b.diagnostics) &&
		a.stateBefore == b.stateBefore && a.stateAfter == b.stateAfter
}

// keep is r as a keptResult, its rest shared with an equal one kept before.
func (s *repeats) keep(r *TurnResult) keptResult {
	rest := &keptRest{candidate: r.Candidate, persona: r.Persona, status: r.Status, scorer: r.Scorer, diagnostics: r.Diagnostics,
		stateBefore: r.StateBefore, stateAfter: r.StateAfter}
	if kept, ok := s.rests.find(func(k *keptRest) bool { return k != nil && k.same(rest) }); ok {
		rest = kept
	} else {
		s.rests.add(rest)
	}
	return keptResult{epoch: int32(r.Epoch), toolCalls: int32(r.ToolCalls),
		scores: [5]*float64{r.ProcessScore, r.KPIScore, r.TurnScore, r.LatencyS, r.CostUSD},
		lists:  s.keepLists(r.Checks, r.FailureTags), rest: rest, finalized: r.Finalized, erred: r.Error}
}

// keepLists is the kept lists of checks and tags: one kept before when it
// holds the same slices, else new.
func (s *repeats) keepLists(checks []CheckResult, tags []string) *keptLists {
	if l, ok := s.lists.find(func(l *keptLists) bool {
		return l != nil && sameSlice(l.checks, checks) && sameSlice(l.failureTags, tags)
	}); ok {
		return l
	}
	l := &keptLists{checks: checks, failureTags: tags}
	s.lists.add(l)
	return l
}

// result is the TurnResult k keeps, of the turn labelled label.
func (k keptResult) result(label string) TurnResult {
	return TurnResult{Candidate: k.rest.candidate, Label: label, Epoch: int(k.epoch), Persona: k.rest.persona,
		Status: k.rest.status, ProcessScore: k.scores[0], KPIScore: k.scores[1], TurnScore: k.scores[2],
		Finalized: k.finalized, Error: k.erred, LatencyS: k.scores[3], ToolCalls: int(k.toolCalls), CostUSD: k.scores[4],
		Checks: k.lists.checks, FailureTags: k.lists.failureTags, Scorer: k.rest.scorer, Diagnostics: k.rest.diagnostics,
		StateBefore: k.rest.stateBefore, StateAfter: k.rest.stateAfter}
}
