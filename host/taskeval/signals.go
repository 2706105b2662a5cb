package taskeval

import (
	"fmt"
	"regexp"
	"strings"
)

// WorkflowSummary counts workflow steps by status.
type WorkflowSummary struct {
	Total   int `json:"total"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Pending int `json:"pending"`
}

// Signals are the deterministic facts the category scores are computed from.
type Signals struct {
	Workflow      WorkflowSummary `json:"workflow"`
	CommitCount   int             `json:"commitCount"`
	ErrorCount    int             `json:"errorCount"`
	WarningCount  int             `json:"warningCount"`
	TimingEntries int             `json:"timingEntries"`
	// ReviewStatus is the verdict of the most recent review ("" without reviews).
	ReviewStatus string `json:"reviewStatus,omitempty"`
}

// Approved reports whether the review status is "approved" (any case).
func (s Signals) Approved() bool {
	return strings.EqualFold(strings.TrimSpace(s.ReviewStatus), "approved")
}

var (
	hexRun    = regexp.MustCompile(`\b[0-9a-fA-F]{7,40}\b`)
	timingRun = regexp.MustCompile(`(?i)\[timing\].*\bin\s+\d+(?:\.\d+)?\s*ms\b`)
)

// CollectSignals derives the deterministic signals of t:
//   - workflow: steps counted by status;
//   - log lines are the activity log entries: one is an error when its
//     lowercased action + " " + outcome contains "error" or "failed", a
//     warning when it contains "warn" (a line can be both), and a timing
//     entry when its action matches "[timing] ... in <N>ms";
//   - commits: the distinct merge commit sha plus the first 7-40 hex run of
//     each log line, compared case-insensitively;
//   - review status: the verdict of the latest review (by timestamp, then
//     input order).
func CollectSignals(t *Task) Signals {
	var s Signals
	for _, st := range t.Workflow {
		s.Workflow.Total++
		switch st.Status {
		case StepPassed:
			s.Workflow.Passed++
		case StepFailed:
			s.Workflow.Failed++
		default:
			s.Workflow.Pending++
		}
	}
	commits := map[string]bool{}
	if sha := strings.TrimSpace(t.MergeCommitSHA); sha != "" {
		commits[strings.ToLower(sha)] = true
	}
	for _, e := range t.Activity {
		line := strings.ToLower(e.Action + " " + e.Outcome)
		if strings.Contains(line, "error") || strings.Contains(line, "failed") {
			s.ErrorCount++
		}
		if strings.Contains(line, "warn") {
			s.WarningCount++
		}
		if timingRun.MatchString(e.Action) {
			s.TimingEntries++
		}
		if sha := hexRun.FindString(e.Action + " " + e.Outcome); sha != "" {
			commits[strings.ToLower(sha)] = true
		}
	}
	s.CommitCount = len(commits)
	latest := -1
	for i, r := range t.Reviews {
		if latest < 0 || !r.Timestamp.Before(t.Reviews[latest].Timestamp) {
			latest = i
		}
	}
	if latest >= 0 {
		s.ReviewStatus = t.Reviews[latest].Verdict
	}
	return s
}

// Scores holds one integer 0..100 score per category.
type Scores map[Category]int

// DeterministicScores computes the three deterministic category scores from
// s exactly as the contract's formulas, in IEEE double arithmetic:
//
//	wpr = total>0 ? passed/total*100 : 50
//	errorPenalty = min(errors*20, 60); warningPenalty = min(warnings*5, 25)
//	commit = min(commits*15, 100); review = approved ? 100 : (status set ? 70 : 50)
//	agentPerformance   = round(clamp(wpr*.5 + review*.3 + commit*.2 - warningPenalty))
//	taskOutcomeQuality = round(clamp(wpr*.6 + commit*.2 + (100-errorPenalty)*.2))
//	processCompliance  = round(clamp(wpr*.5 + review*.3 + (timing>0 ? 100 : 50)*.2 - errorPenalty))
func DeterministicScores(s Signals) Scores {
	wpr := 50.0
	if s.Workflow.Total > 0 {
		wpr = float64(float64(s.Workflow.Passed)/float64(s.Workflow.Total)) * 100
	}
	errorPenalty := float64(min(s.ErrorCount*20, 60))
	warningPenalty := float64(min(s.WarningCount*5, 25))
	commit := float64(min(s.CommitCount*15, 100))
	review := 50.0
	switch {
	case s.Approved():
		review = 100
	case strings.TrimSpace(s.ReviewStatus) != "":
		review = 70
	}
	timing := 50.0
	if s.TimingEntries > 0 {
		timing = 100
	}
	// Every product is converted explicitly so no platform fuses it into
	// a multiply-add with a different rounding.
	ap := float64(wpr*0.5) + float64(review*0.3) + float64(commit*0.2) - warningPenalty
	tq := float64(wpr*0.6) + float64(commit*0.2) + float64((100-errorPenalty)*0.2)
	pc := float64(wpr*0.5) + float64(review*0.3) + float64(timing*0.2) - errorPenalty
	return Scores{
		AgentPerformance:   roundScore(ap),
		TaskOutcomeQuality: roundScore(tq),
		ProcessCompliance:  roundScore(pc),
	}
}

// Explain renders the signals as a one-line rationale.
func (s Signals) Explain() string {
	review := s.ReviewStatus
	if review == "" {
		review = "none"
	}
	return fmt.Sprintf("deterministic: workflow %d/%d passed (%d failed, %d pending), %d commits, %d errors, %d warnings, %d timing entries, review %s",
		s.Workflow.Passed, s.Workflow.Total, s.Workflow.Failed, s.Workflow.Pending,
		s.CommitCount, s.ErrorCount, s.WarningCount, s.TimingEntries, review)
}
