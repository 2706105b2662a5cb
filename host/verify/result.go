package verify

import (
	"github.com/assay-eval/assay/host/score"
)

// TurnResult is one turn's outcome: one object of results.json, and what is
// stored with the turn.
type TurnResult struct {
	Candidate    string        `json:"candidate"`
	Label        string        `json:"label"`
	Epoch        int           `json:"epoch"` // which repetition of the task, from 1
	Persona      string        `json:"persona"`
	Status       score.Status  `json:"status"`
	ProcessScore *float64      `json:"process_score"`
	KPIScore     *float64      `json:"kpi_score"`
	TurnScore    *float64      `json:"turn_score"`
	Finalized    bool          `json:"finalized"`
	Error        bool          `json:"error"`
	LatencyS     *float64      `json:"latency_s"`
	ToolCalls    int           `json:"tool_calls"`
	CostUSD      *float64      `json:"cost_usd"`
	Checks       []CheckResult `json:"checks"`
	FailureTags  []string      `json:"failure_tags"`
	Scorer       ScorerRef     `json:"scorer"`
	Diagnostics  []string      `json:"diagnostics,omitempty"`
	StateBefore  string        `json:"state_before_sha256,omitempty"`
	StateAfter   string        `json:"state_after_sha256,omitempty"`

	// weight, sliceTags and subAgents feed the summary; not part of the file.
	weight    float64
	sliceTags []string
}

// CheckResult is one check of a turn: a scorer's KPI check or a CEL check.
type CheckResult struct {
	Name       string   `json:"name"`
	Source     string   `json:"source"` // "scorer:<id>" or "cel"
	Score      float64  `json:"score"`
	Passed     bool     `json:"passed"`
	Detail     string   `json:"detail"`
	FailureTag string   `json:"failure_tag,omitempty"`
	Evidence   []string `json:"evidence,omitempty"`
}

// ScorerRef names the exact scorer that scored a turn.
type ScorerRef struct {
	ID      string `json:"id"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

// scoreTurn converts the result into the summary's view of it.
func (r *TurnResult) scoreTurn() score.Turn {
	t := score.Turn{
		Label:       r.Label,
		Epoch:       r.Epoch,
		Persona:     r.Persona,
		Weight:      r.weight,
		SliceTags:   r.sliceTags,
		Status:      r.Status,
		Finalized:   r.Finalized,
		Error:       r.Error,
		LatencyS:    r.LatencyS,
		CostUSD:     r.CostUSD,
		ToolCalls:   r.ToolCalls,
		FailureTags: r.FailureTags,
	}
	if r.ProcessScore != nil {
		t.ProcessScore = *r.ProcessScore
	}
	if r.KPIScore != nil {
		t.KPIScore = *r.KPIScore
	}
	if r.TurnScore != nil {
		t.TurnScore = *r.TurnScore
	}
	return t
}
