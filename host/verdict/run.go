package verdict

// RunEvidence is what a verified run contributes to its verdict.
type RunEvidence struct {
	TaskID string
	// MeanKPIScore is the mean KPI score over the run's scored turns.
	MeanKPIScore float64
	// ChecksPassed and ChecksFailed count KPI checks over every turn: a check
	// with score 1 passed, any other failed.
	ChecksPassed, ChecksFailed int
	// TasksScored is the number of pack tasks with a scored turn, of TasksTotal.
	TasksScored, TasksTotal int
	// Regressions name the tasks whose turn score fell against the baseline.
	Regressions []string
}

// FromRun maps a verified run onto an evaluation input: correctness = mean
// KPI score (when some task was scored), requirementCoverage = scored/total
// (when the pack has tasks), tests = the KPI checks passed and failed (when
// there were any).
func FromRun(r RunEvidence) Input {
	in := Input{TaskID: r.TaskID, Metrics: map[string]float64{}, Regressions: append([]string(nil), r.Regressions...)}
	if r.TasksScored > 0 {
		in.Metrics[Correctness] = r.MeanKPIScore
	}
	if r.TasksTotal > 0 {
		in.Metrics[RequirementCoverage] = float64(r.TasksScored) / float64(r.TasksTotal)
	}
	if r.ChecksPassed+r.ChecksFailed > 0 {
		in.Tests = &Tests{Passed: r.ChecksPassed, Failed: r.ChecksFailed}
	}
	return in
}
