package memorygrounding

import (
	"fmt"
	"slices"
	"strings"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/grade"
)

// KPI keys.
const (
	KeyMemoryToolCalled = "memory_tool_called"
	KeyGroundedInMemory = "grounded_in_memory"
	KeyMinOverlap       = "min_overlap"
	KeyMemoryTools      = "memory_tools"
	KeyAnswerKeywords   = "answer_keywords"
)

// DefaultMinOverlap is the number of shared content words that grounds an
// answer when the task does not set min_overlap.
const DefaultMinOverlap = 3

const tagUngrounded = "ungrounded_answer"

// description is built fresh for every caller, so nobody can change another's.
func description() sdk.Description {
	return sdk.Description{
		ID:      "memory_grounding",
		Version: "1.0.0",
		KPIs: []sdk.KPI{
			{Key: KeyMemoryToolCalled, ValueType: sdk.Bool, FailureTag: tagUngrounded,
				Description: "true: the turn called a tool whose name contains \"memory\" or is one of memory_tools (false: it called none)"},
			{Key: KeyGroundedInMemory, ValueType: sdk.Bool, FailureTag: tagUngrounded,
				Description: "true: some memory entry shares at least min_overlap distinct content words with the answer, partial credit found/min_overlap (false: none does)"},
			{Key: KeyMinOverlap, ValueType: sdk.Integer,
				Description: "the shared content words (4+ letters, not stop-words) that ground an answer; default 3; a setting of grounded_in_memory, no check of its own"},
			{Key: KeyMemoryTools, ValueType: sdk.StringList,
				Description: "more tool names that count as memory tools; a setting of memory_tool_called, no check of its own"},
			{Key: KeyAnswerKeywords, ValueType: sdk.StringList,
				Description: "fraction of the listed keywords found in the answer (case-insensitive substring); no failure tag"},
		},
		Needs: []sdk.Need{sdk.NeedTrace, sdk.NeedNoStreamedText, sdk.NeedNoToolArgs, sdk.NeedAnswer, sdk.NeedStateAfter},
	}
}

// New returns the memory_grounding scorer.
func New() sdk.Scorer { return newScorer(new(indexCache)) }

// newScorer is the scorer with its memory indexes in ix.
func newScorer(ix *indexCache) sdk.Scorer {
	return grade.NewScorer(description, func(s *grade.Sheet, c *sdk.Case) { checkCase(s, c, ix) })
}

// checkCase records the checks of case c on s.
func checkCase(s *grade.Sheet, c *sdk.Case, ix *indexCache) {
	extra, hasExtra := s.StringList(KeyMemoryTools)
	if want, ok := s.Bool(KeyMemoryToolCalled); ok {
		toolCheck(s, c.Turn.ToolCalls, extra, want)
	} else if hasExtra && !s.Has(KeyMemoryToolCalled) {
		s.Diag("kpi %s is set but %s is not: it has no effect", KeyMemoryTools, KeyMemoryToolCalled)
	}

	minOverlap := DefaultMinOverlap
	if n, ok := s.Integer(KeyMinOverlap); ok {
		if n >= 1 {
			minOverlap = n
		} else {
			s.Diag("kpi %s: want a whole number >= 1, got %d; using %d", KeyMinOverlap, n, DefaultMinOverlap)
		}
		if !s.Has(KeyGroundedInMemory) {
			s.Diag("kpi %s is set but %s is not: it has no effect", KeyMinOverlap, KeyGroundedInMemory)
		}
	}
	if want, ok := s.Bool(KeyGroundedInMemory); ok {
		groundCheck(s, ix, c.StateAfter, c.Turn.Answer, minOverlap, want)
	}

	if kws, ok := s.StringList(KeyAnswerKeywords); ok {
		s.KeywordCheck(KeyAnswerKeywords, "the answer", c.Turn.Answer, kws)
	}
}

// toolCheck records memory_tool_called.
func toolCheck(s *grade.Sheet, calls []sdk.ToolCall, extra []string, want bool) {
	var used []string
	for _, call := range calls {
		if isMemoryTool(call.Name, extra) && !slices.Contains(used, call.Name) {
			used = append(used, call.Name)
		}
	}
	what := `a tool whose name contains "memory"`
	if len(extra) > 0 {
		what += " or one of " + strings.Join(extra, ", ")
	}
	switch {
	case len(used) > 0 && want:
		s.Pass(KeyMemoryToolCalled, "memory tools called: "+strings.Join(used, ", "), used...)
	case want:
		s.Fail(KeyMemoryToolCalled, fmt.Sprintf("no memory tool called (%s); want %s", grade.Count(len(calls), "tool call", "tool calls"), what))
	case len(used) > 0:
		s.Fail(KeyMemoryToolCalled, "memory tools called: "+strings.Join(used, ", ")+"; want none (memory_tool_called is false)", used...)
	default:
		s.Pass(KeyMemoryToolCalled, "no memory tool called, as wanted (memory_tool_called is false)")
	}
}

func isMemoryTool(name string, extra []string) bool {
	if strings.Contains(strings.ToLower(name), "memory") {
		return true
	}
	for _, e := range extra {
		if strings.EqualFold(name, e) {
			return true
		}
	}
	return false
}

// groundCheck records grounded_in_memory.
func groundCheck(s *grade.Sheet, ix *indexCache, after *sdk.Snapshot, answer string, minOverlap int, want bool) {
	if after == nil {
		s.Diag("no state_after snapshot: cannot check the answer against memory")
		s.Fail(KeyGroundedInMemory, "no state_after snapshot to find memory entries in")
		return
	}
	if len(after.Memory) == 0 {
		s.Fail(KeyGroundedInMemory, "state_after has no memory entries to ground the answer in")
		return
	}
	words := distinctWords(answer)
	entry, shared := ix.indexOf(after).best(words)
	var where string
	var evidence []string
	if entry >= 0 {
		e := &after.Memory[entry]
		where = "memory entry " + e.ID
		if e.Title != "" {
			where = fmt.Sprintf("memory entry '%s' (%s)", e.Title, e.ID)
		}
		evidence = []string{e.ID}
	}
	grounded := len(shared) >= minOverlap
	var detail string
	switch {
	case len(words) == 0:
		detail = "the answer has no content words (4+ letters, not stop-words)"
	case entry < 0:
		detail = fmt.Sprintf("no memory entry shares a content word with the answer (%s, %s)",
			grade.Count(len(after.Memory), "entry", "entries"), grade.Count(len(words), "answer word", "answer words"))
	default:
		detail = fmt.Sprintf("the answer shares %s with %s (%s)",
			grade.Count(len(shared), "content word", "content words"), where, strings.Join(shared, ", "))
	}
	if !want {
		detail += fmt.Sprintf(", want fewer than %d (grounded_in_memory is false)", minOverlap)
		s.Verdict(KeyGroundedInMemory, !grounded, detail, evidence...)
		return
	}
	detail += fmt.Sprintf(", want >= %d", minOverlap)
	s.Score(KeyGroundedInMemory, float64(len(shared))/float64(minOverlap), detail, evidence...)
}
