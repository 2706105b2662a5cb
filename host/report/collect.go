package report

import (
	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/verify"
)

// Turn is what the writers keep of one turn: enough to say which checks
// failed and why, without the turn's whole result.
type Turn struct {
	Label string
	// Epoch is the turn's epoch when the candidate ran a task several times;
	// 0 when it ran each task once. The writers name a turn by label and
	// epoch (caseName), so epochs add test cases, not a new layout.
	Epoch       int
	Status      score.Status
	TurnScore   *float64
	LatencyS    *float64
	FailedTags  []string
	Failed      []verify.CheckResult // the checks that failed (score below 1)
	Diagnostics []string             // why an unscored turn was not scored
}

// Candidate is one verified candidate's turns, in pack task order.
type Candidate struct {
	ID    string
	Turns []Turn
}

// Collector keeps each candidate's turns as verify.Run reports them, for
// the writers: pass Add as (or call it from) verify.Request.OnCandidate.
type Collector struct {
	candidates map[string]*Candidate
}

// NewCollector returns an empty collector.
func NewCollector() *Collector {
	return &Collector{candidates: map[string]*Candidate{}}
}

// Add keeps the turns of one verified candidate.
func (c *Collector) Add(out *verify.Outcome, _ *verify.CandidateReport) {
	cand := &Candidate{ID: out.Candidate, Turns: make([]Turn, 0, len(out.Results))}
	epochs := false
	for _, r := range out.Results {
		epochs = epochs || r.Epoch > 1
	}
	for _, r := range out.Results {
		t := Turn{Label: r.Label, Status: r.Status, TurnScore: r.TurnScore, LatencyS: r.LatencyS,
			FailedTags: r.FailureTags, Diagnostics: r.Diagnostics}
		if epochs {
			t.Epoch = r.Epoch
		}
		for _, ch := range r.Checks {
			if ch.Score < 1 {
				t.Failed = append(t.Failed, ch)
			}
		}
		cand.Turns = append(cand.Turns, t)
	}
	c.candidates[out.Candidate] = cand
}

// turns is the candidate's collected turns; nil when it was not collected.
func (c *Collector) turns(id string) []Turn {
	if c == nil || c.candidates[id] == nil {
		return nil
	}
	return c.candidates[id].Turns
}
