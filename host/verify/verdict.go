package verify

import (
	"fmt"
	"strings"

	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/verdict"
)

// RunVerdict is a verified candidate's verdict (docs/verify.md). It has the
// fields of an evaluation (`assay eval --report` reads it back as one) and
// follows the candidate's gates: gates failed is FAIL (BLOCKED when no turn
// was scored); gates passed is PASS, or PASS_WITH_WARNINGS when a check
// failed, a turn was unscored or missing, a turn of the input was ignored
// (its label is not a task of the pack), or the candidate regressed against
// the baseline: the paired comparison's interval lies entirely below
// -regression_min_delta (docs/scoring.md). Per-task regressions are listed
// in Regressions, labelled as such, and alone do not make a warning. Score
// is the candidate's mean_score.
type RunVerdict struct {
	verdict.Evaluation
	// Reasons say why the verdict is not PASS: each failed gate, then each
	// warning. Empty for PASS.
	Reasons []string `json:"reasons"`
}

// runVerdict is the verdict of a verified candidate. Metrics, tests and
// confidence are the evaluation engine's view of the run (verdict.FromRun);
// the verdict, score and reasons follow the gates.
func runVerdict(out *Outcome, regressions []string, paired *score.Paired) RunVerdict {
	ev := runEvidence(out, regressions)
	base := verdict.Evaluate(verdict.FromRun(ev))
	sum := out.Summary
	var reasons, recs []string
	add := func(reason, rec string) {
		reasons = append(reasons, reason)
		recs = append(recs, rec)
	}
	for _, g := range sum.Gates.Failed {
		add(fmt.Sprintf("gate %s failed: %.3f against threshold %.3f", g.Gate, g.Value, g.Threshold),
			fmt.Sprintf("Meet the %s gate (now %.3f, threshold %.3f).", g.Gate, g.Value, g.Threshold))
	}
	if ev.ChecksFailed > 0 {
		add(fmt.Sprintf("%d of %d checks failed", ev.ChecksFailed, ev.ChecksFailed+ev.ChecksPassed),
			fmt.Sprintf("Fix the %d failing %s.", ev.ChecksFailed, plural(ev.ChecksFailed, "check", "checks")))
	}
	if sum.Unscored > 0 {
		add(fmt.Sprintf("%d %s unscored", sum.Unscored, plural(sum.Unscored, "turn", "turns")),
			"Score the unscored turns again (their diagnostics say why they were not scored).")
	}
	if sum.Missing > 0 {
		add(fmt.Sprintf("%d pack %s missing", sum.Missing, plural(sum.Missing, "task", "tasks")),
			"Run the missing pack tasks.")
	}
	if n := len(out.Ignored); n > 0 {
		add(fmt.Sprintf("%d %s ignored: not a task of the pack (%s)", n, plural(n, "turn", "turns"), listSome(out.Ignored, 5)),
			"Fix the ignored turns' labels, or verify them against the pack that has their tasks.")
	}
	if paired != nil && paired.Regression {
		reason := fmt.Sprintf("regression against baseline %s: mean paired delta %.3f, 95%% interval [%.3f, %.3f] over %d %s, entirely below %.3f",
			paired.Baseline, paired.MeanDelta, paired.CI95[0], paired.CI95[1], paired.Tasks, plural(paired.Tasks, "task", "tasks"), 0-paired.MinDelta)
		if len(regressions) > 0 {
			reason += fmt.Sprintf("; per-task %s: %s", plural(len(regressions), "regression", "regressions"), strings.Join(regressions, "; "))
		}
		add(reason, "Resolve the regression against the baseline.")
	}
	v := verdict.Pass
	switch {
	case !sum.Gates.Passed && ev.TasksScored == 0:
		v = verdict.Blocked
	case !sum.Gates.Passed:
		v = verdict.Fail
	case len(reasons) > 0:
		v = verdict.PassWithWarnings
	}
	base.Verdict, base.Success, base.Score = v, v.Success(), sum.MeanScore
	base.Recommendations = append([]string{}, recs...)
	return RunVerdict{Evaluation: base, Reasons: append([]string{}, reasons...)}
}

// runEvidence is what the evaluation engine reads of a verified run.
func runEvidence(out *Outcome, regressions []string) verdict.RunEvidence {
	ev := verdict.RunEvidence{TaskID: out.Candidate, Regressions: regressions, TasksTotal: len(out.Results)}
	var kpiSum float64
	for _, r := range out.Results {
		if r.Status != score.StatusScored {
			continue
		}
		ev.TasksScored++
		if r.KPIScore != nil {
			kpiSum += *r.KPIScore
		}
		for _, ch := range r.Checks {
			if ch.Score >= 1 {
				ev.ChecksPassed++
			} else {
				ev.ChecksFailed++
			}
		}
	}
	if ev.TasksScored > 0 {
		ev.MeanKPIScore = kpiSum / float64(ev.TasksScored)
	}
	return ev
}

// listSome joins the first max names, saying how many more there are.
func listSome(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
