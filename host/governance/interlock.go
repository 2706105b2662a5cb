package governance

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/verify"
)

// Entry is one finished verification attempt of a candidate's run: what
// kill criteria read as history and promotion counts as a shadow run.
type Entry struct {
	RunID     int64                  `json:"run_id"`
	Attempt   int                    `json:"attempt"`
	Candidate string                 `json:"candidate"`
	CreatedAt time.Time              `json:"created_at"`
	Units     verify.Units           `json:"units"`
	Report    verify.CandidateReport `json:"report"`
}

// Interlock names, in the order they are checked (docs/governance.md).
const (
	InterlockLatestGates  = "latest_run_gates"
	InterlockShadowRuns   = "shadow_runs"
	InterlockNoRegression = "no_regression"
	InterlockKillCriteria = "kill_criteria"
	InterlockScorers      = "scorers"
	InterlockDrift        = "drift"
)

// Interlock is one interlock's state: green (OK) or red, and why.
type Interlock struct {
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// ScorerFlag is what makes a scorer block promotion: suspect from review,
// or nondeterministic (or changed without a version change) from a probe.
type ScorerFlag struct {
	Suspect          bool
	Nondeterministic bool
	Why              string
}

// PromotionInput is everything the interlocks look at.
type PromotionInput struct {
	Promotion pack.Promotion
	History   []Entry // the candidate's, oldest first
	Baseline  string  // empty when none was given
	// BaselineHistory is the baseline's history, oldest first.
	BaselineHistory []Entry
	Fired           []Firing              // the pack's kill criteria still fired
	Scorers         map[string]ScorerFlag // by scorer id
}

// Interlocks evaluates every promotion interlock; promotion may go ahead
// only when all are green.
func Interlocks(in PromotionInput) map[string]Interlock {
	out := map[string]Interlock{}
	latest, ok := last(in.History)
	if !ok {
		red := Interlock{Detail: "the candidate has no finished run against this pack"}
		for _, n := range []string{InterlockLatestGates, InterlockShadowRuns, InterlockNoRegression, InterlockScorers, InterlockDrift} {
			out[n] = red
		}
		out[InterlockKillCriteria] = killInterlock(in.Fired)
		return out
	}
	out[InterlockLatestGates] = gatesInterlock(latest)
	out[InterlockShadowRuns] = shadowInterlock(in.History, latest, in.Promotion.ShadowRuns)
	base, hasBase := last(in.BaselineHistory)
	out[InterlockNoRegression] = regressionInterlock(in, latest, base, hasBase)
	out[InterlockKillCriteria] = killInterlock(in.Fired)
	out[InterlockScorers] = scorersInterlock(latest, in.Scorers)
	out[InterlockDrift] = driftInterlock(in.Baseline, latest, base, hasBase)
	return out
}

// InterlockNames are the interlocks in the order they are checked.
func InterlockNames() []string {
	return []string{InterlockLatestGates, InterlockShadowRuns, InterlockNoRegression, InterlockKillCriteria, InterlockScorers, InterlockDrift}
}

// Red lists the red interlocks, in check order, as "name: detail".
func Red(ls map[string]Interlock) []string {
	var out []string
	for _, n := range InterlockNames() {
		if l, ok := ls[n]; ok && !l.OK {
			out = append(out, n+": "+l.Detail)
		}
	}
	return out
}

func last(h []Entry) (Entry, bool) {
	if len(h) == 0 {
		return Entry{}, false
	}
	return h[len(h)-1], true
}

func gatesInterlock(e Entry) Interlock {
	if e.Report.Gates.Passed {
		return Interlock{OK: true, Detail: fmt.Sprintf("run %d attempt %d passed every gate", e.RunID, e.Attempt)}
	}
	var failed []string
	for _, f := range e.Report.Gates.Failed {
		failed = append(failed, f.Gate)
	}
	return Interlock{Detail: fmt.Sprintf("run %d attempt %d failed gates: %s", e.RunID, e.Attempt, strings.Join(failed, ", "))}
}

// shadowInterlock needs the latest n runs with the latest run's drift units
// to exist and to have passed every gate.
func shadowInterlock(h []Entry, latest Entry, n int) Interlock {
	if n <= 0 {
		return Interlock{OK: true, Detail: "no shadow runs required (scoring.promotion.shadow_runs is 0)"}
	}
	var same []Entry
	for i := len(h) - 1; i >= 0 && len(same) < n; i-- {
		if sameUnits(h[i], latest) {
			same = append(same, h[i])
		}
	}
	if len(same) < n {
		return Interlock{Detail: fmt.Sprintf("%d of the %d shadow runs with the same drift units", len(same), n)}
	}
	for _, e := range same {
		if !e.Report.Gates.Passed {
			return Interlock{Detail: fmt.Sprintf("shadow run %d attempt %d failed its gates", e.RunID, e.Attempt)}
		}
	}
	return Interlock{OK: true, Detail: fmt.Sprintf("the latest %d runs with the same drift units passed every gate (%d required)", len(same), n)}
}

func regressionInterlock(in PromotionInput, latest, base Entry, hasBase bool) Interlock {
	if !in.Promotion.RequireNoRegression {
		return Interlock{OK: true, Detail: "not required (scoring.promotion.require_no_regression is false)"}
	}
	if in.Baseline == "" {
		return Interlock{Detail: "required, and no --baseline was given"}
	}
	if !hasBase {
		return Interlock{Detail: fmt.Sprintf("baseline %q has no finished run against this pack", in.Baseline)}
	}
	if p := latest.Report.Paired; p != nil && p.Baseline == in.Baseline && p.Regression {
		return Interlock{Detail: fmt.Sprintf("paired delta %.3f against %s: its 95%% interval lies below -%.3f", p.MeanDelta, in.Baseline, p.MinDelta)}
	}
	cand, b := latest.Report.MeanScore, base.Report.MeanScore
	if cand < b-in.Promotion.RegressionMinDelta {
		return Interlock{Detail: fmt.Sprintf("mean score %.3f is below the baseline's %.3f (minus regression_min_delta %.3f)", cand, b, in.Promotion.RegressionMinDelta)}
	}
	return Interlock{OK: true, Detail: fmt.Sprintf("mean score %.3f against the baseline's %.3f", cand, b)}
}

func killInterlock(fired []Firing) Interlock {
	if len(fired) == 0 {
		return Interlock{OK: true, Detail: "no kill criterion has fired"}
	}
	var names []string
	for _, f := range fired {
		names = append(names, fmt.Sprintf("%s (run %d)", f.Name, f.RunID))
	}
	return Interlock{Detail: "fired and not cleared: " + strings.Join(names, ", ")}
}

func scorersInterlock(latest Entry, flags map[string]ScorerFlag) Interlock {
	var bad []string
	for _, s := range latest.Units.Scorers {
		if f := flags[s.ID]; f.Suspect || f.Nondeterministic {
			bad = append(bad, fmt.Sprintf("%s %s (%s)", s.ID, s.Version, f.Why))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		return Interlock{Detail: "flagged scorers: " + strings.Join(bad, "; ")}
	}
	return Interlock{OK: true, Detail: fmt.Sprintf("none of the %d scorers is suspect or nondeterministic", len(latest.Units.Scorers))}
}

func driftInterlock(baseline string, latest, base Entry, hasBase bool) Interlock {
	if baseline == "" {
		return Interlock{OK: true, Detail: "no --baseline given: nothing to drift from"}
	}
	if !hasBase {
		return Interlock{Detail: fmt.Sprintf("baseline %q has no finished run against this pack", baseline)}
	}
	ds := verify.DriftBetween(base.Units, latest.Units)
	if len(ds) == 0 {
		return Interlock{OK: true, Detail: "same drift units as the baseline"}
	}
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return Interlock{Detail: strings.Join(lines, "; ")}
}

func sameUnits(a, b Entry) bool { return len(verify.DriftBetween(a.Units, b.Units)) == 0 }
