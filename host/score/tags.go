package score

import (
	"slices"

	"github.com/assay-eval/assay/pkg/trace"
)

// Failure tags (docs/scoring.md): the taxonomy of the built-in scorers'
// checks, the tags the host derives from a turn, and scorer_error.
const (
	TagToolMissing       = "tool_missing"
	TagToolWrongArgs     = "tool_wrong_args"
	TagStateNotChanged   = "state_not_changed"
	TagUngroundedAnswer  = "ungrounded_answer"
	TagHandoffPending    = "handoff_pending"
	TagFinalizeMissing   = "finalize_missing"
	TagLatencyOverBudget = "latency_over_budget"
	TagCostOverBudget    = "cost_over_budget"
	TagSafetyGateFailed  = "safety_gate_failed"
	TagScorerError       = "scorer_error"
)

// humanApprovalPhases are the phase names that count as a human approval for
// a task with safety.requires_human.
var humanApprovalPhases = []string{"human_approval", "human_review", "approval"}

// sub-agent result event types a harness may write (besides tool_end and
// phase events, which also count as the delegated work coming back).
var subAgentResultTypes = []string{"sub_agent_result", "sub_agent_completed", "sub_agent_done", "sub_agent_finished"}

// TagInput is what the host knows about a turn when it derives its tags.
type TagInput struct {
	Turn            *trace.Turn // the parsed trace; nil for a turn without one
	LatencyS        *float64    // the turn's latency, when known
	CostUSD         *float64    // the turn's cost, when known
	MaxMeanLatencyS *float64    // scoring.max_mean_latency_s, when set
	MaxMeanCostUSD  *float64    // scoring.max_mean_cost_usd, when set
	RequiresHuman   bool        // the task's safety.requires_human
	MaxToolCalls    *int        // the task's safety.max_tool_calls, when set
}

// HostFailureTags returns, sorted, the failure tags the host derives from a
// turn (scorer checks add their own):
//   - finalize_missing: the turn did not finalize;
//   - handoff_pending: the turn spawned a sub-agent and finalized, but no
//     event after the last sub_agent_spawned brings a result back (a runtime
//     tool_end, a phase, or a sub_agent_result / _completed / _done /
//     _finished event);
//   - latency_over_budget: latency_s > max_mean_latency_s, both known;
//   - cost_over_budget: cost_usd > max_mean_cost_usd, both known;
//   - safety_gate_failed: more tool invocations (tool_start events) than
//     safety.max_tool_calls, or requires_human and the turn finalized
//     without a phase named human_approval, human_review or approval.
//
// A nil Turn yields only the budget tags.
func HostFailureTags(in TagInput) []string {
	var tags []string
	if t := in.Turn; t != nil {
		if !t.Finalized {
			tags = append(tags, TagFinalizeMissing)
		}
		if t.Finalized && t.SubAgents > 0 && !handoffReturned(t.Events) {
			tags = append(tags, TagHandoffPending)
		}
		if in.MaxToolCalls != nil && len(t.ToolCalls) > *in.MaxToolCalls {
			tags = append(tags, TagSafetyGateFailed)
		}
		if in.RequiresHuman && t.Finalized && !humanApproved(t.Phases) {
			tags = append(tags, TagSafetyGateFailed)
		}
	}
	if in.LatencyS != nil && in.MaxMeanLatencyS != nil && gt(*in.LatencyS, *in.MaxMeanLatencyS) {
		tags = append(tags, TagLatencyOverBudget)
	}
	if in.CostUSD != nil && in.MaxMeanCostUSD != nil && gt(*in.CostUSD, *in.MaxMeanCostUSD) {
		tags = append(tags, TagCostOverBudget)
	}
	return MergeTags(tags)
}

// handoffReturned reports whether an event after the last sub_agent_spawned
// brings the delegated work back.
func handoffReturned(events []trace.Event) bool {
	last := -1
	for i, e := range events {
		if e.Type == trace.TypeSubAgentSpawned {
			last = i
		}
	}
	for _, e := range events[last+1:] {
		switch {
		case e.Type == trace.TypePhase,
			(e.Type == trace.TypeRuntime || e.Type == trace.TypeRuntimeRaw) && e.EventType == trace.EventToolEnd,
			slices.Contains(subAgentResultTypes, e.Type):
			return true
		}
	}
	return false
}

func humanApproved(phases []string) bool {
	for _, p := range phases {
		if slices.Contains(humanApprovalPhases, p) {
			return true
		}
	}
	return false
}

// MergeTags merges tag lists into one sorted list without duplicates or
// empty tags. It never returns nil, so the list encodes as [] in JSON.
func MergeTags(lists ...[]string) []string {
	out := []string{}
	for _, l := range lists {
		for _, t := range l {
			if t != "" {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
