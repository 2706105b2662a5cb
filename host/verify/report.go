package verify

import (
	"fmt"
	"sort"
	"strings"

	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/pkg/diag"
)

// PackRef names the pack a report is about.
type PackRef struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Report is one verification of one or more candidates against a pack: what
// Run returns and what summary.json holds (docs/verify.md).
type Report struct {
	// SchemaVersion is the version of summary.json's layout
	// (packs/schema/summary.v1.json); SummarySchemaVersion.
	SchemaVersion int               `json:"schema_version"`
	Pack          PackRef           `json:"pack"`
	Candidates    []CandidateReport `json:"candidates"`
	Frontier      []string          `json:"frontier"`
	// NotDistinguishable are the pairs of frontier candidates whose
	// mean_score intervals overlap: not distinguishable on this data.
	NotDistinguishable Pairs `json:"frontier_not_distinguishable"`
	// Errors are the candidates whose input could not be read at all: they
	// were not verified, and each is listed with why.
	Errors []CandidateError `json:"errors"`
	// ScorerFailures are the scorers that produced no result for too many
	// of a candidate's turns (Request.ScorerErrorShare): the host could not
	// run them.
	ScorerFailures []ScorerFailure `json:"scorer_failures"`
	// UnreadableTurns counts the turns recorded unscored because their input
	// (trace or snapshot) could not be read.
	UnreadableTurns int `json:"unreadable_turns"`
	// ScorerHealth is each scorer's latest probe (docs/evidence.md); a
	// nondeterministic scorer is flagged here.
	ScorerHealth []ScorerHealth `json:"scorer_health"`
	// KillCriteria are the pack's kill criteria that are fired and not
	// cleared, or could not be evaluated (docs/governance.md); absent when
	// none is.
	KillCriteria []FiredCriterion `json:"kill_criteria,omitempty"`
	// Warnings are the run's warnings about how it was run, from the
	// scorers' host (a scorer that started only with AutoMTLS,
	// docs/plugins.md "The connection"); absent when there is none.
	Warnings []string `json:"warnings,omitempty"`
	// InputWarnings are the warnings about the run's input, with their
	// positions (a turn whose label is not a task of the pack, a run's
	// listed turn without its trace, an OTLP trace without a label): the
	// first MaxInputWarnings of them, in the order found; absent when there
	// is none. InputWarningsOmitted counts the ones left out.
	InputWarnings        []diag.Diagnostic `json:"input_warnings,omitempty"`
	InputWarningsOmitted int               `json:"input_warnings_omitted,omitempty"`
	// Diagnostics are every input problem found, warnings included; they
	// were also passed to Request.Diagnostics as they were found.
	Diagnostics diag.List `json:"-"`
}

// FiredCriterion is a kill criterion that fired: a flag for a person,
// nothing more (docs/governance.md).
type FiredCriterion struct {
	Name      string `json:"name"`
	Fired     bool   `json:"fired"`
	Candidate string `json:"candidate"`
	RunID     int64  `json:"run_id"`
	Message   string `json:"message"`
	// New says this verification fired it; otherwise it fired before and
	// is not cleared yet.
	New bool `json:"new"`
	// Error says why the criterion could not be evaluated; it is then not
	// fired, and not known to be clear either.
	Error string `json:"error,omitempty"`
}

// MaxInputWarnings caps Report.InputWarnings, so that an input with a
// warning on every turn does not grow the report with the run.
const MaxInputWarnings = 100

// SummarySchemaVersion is the summary.json layout this assay writes: it
// changes when a field is removed or changes meaning (docs/verify.md), not
// when one is added.
const SummarySchemaVersion = 1

// CandidateReport is one verified candidate: its score summary, what was
// reused from an earlier verification, and its verdict.
type CandidateReport struct {
	score.Summary
	RunID int64 `json:"run_id,omitempty"`
	// Reused counts the turns taken from the candidate's earlier
	// verification because their inputs were unchanged.
	Reused int `json:"reused"`
	// Rescored counts the recorded turns scored again because their inputs
	// changed; RescoredLabels names them.
	Rescored       int      `json:"rescored"`
	RescoredLabels []string `json:"rescored_labels"`
	// Retried counts the turns recorded before as unscored (input
	// unreadable, scorer broken) that were scored again; RetriedLabels
	// names them.
	Retried       int      `json:"retried"`
	RetriedLabels []string `json:"retried_labels"`
	// ScoredOnRetry counts the turns scored only on a retry in this run:
	// their batch lost the plugin process (a crash or a hang) or the scorer
	// failed them once, and a fresh process scored them. Their scores
	// count; ScoredOnRetryLabels names them, and each turn's diagnostics
	// say how it was retried.
	ScoredOnRetry       int      `json:"scored_on_retry"`
	ScoredOnRetryLabels []string `json:"scored_on_retry_labels"`
	// Ignored counts the turns of the candidate's input whose label is not
	// a task of the pack: they were neither scored nor recorded.
	// IgnoredLabels names them (label, or label.epoch for a later epoch).
	Ignored       int      `json:"ignored"`
	IgnoredLabels []string `json:"ignored_labels"`
	// Paired is the comparison with the baseline, task by task; nil without
	// a baseline and for the baseline itself.
	Paired  *score.Paired `json:"paired,omitempty"`
	Verdict RunVerdict    `json:"verdict"`
	// Drift lists the drift units that differ from the baseline's run
	// (docs/evidence.md); absent without a baseline.
	Drift []Drift `json:"drift,omitempty"`
}

// CandidateError is a candidate that could not be verified.
type CandidateError struct {
	Candidate string `json:"candidate"`
	Input     string `json:"input"` // the run directory or turns file
	Error     string `json:"error"`
}

// ScorerFailure is a scorer that produced no result for Failed of the Turns
// it was asked to score for Candidate.
type ScorerFailure struct {
	Candidate string `json:"candidate"`
	Scorer    string `json:"scorer"`
	Failed    int    `json:"failed"`
	Turns     int    `json:"turns"`
}

func (f ScorerFailure) String() string {
	return fmt.Sprintf("scorer %s produced no result for %d of %d turns of candidate %s", f.Scorer, f.Failed, f.Turns, f.Candidate)
}

// Status is how a verification ended, worst first; it maps onto the exit
// codes of `assay verify` (docs/verify.md).
type Status int

const (
	// StatusHostFailed: a scorer could not run (ScorerFailures).
	StatusHostFailed Status = iota
	// StatusInvalidInput: a candidate or some turns could not be read.
	StatusInvalidInput
	// StatusGateFailed: a verified candidate failed a gate.
	StatusGateFailed
	// StatusPassed: every candidate was verified and passed its gates.
	StatusPassed
)

// Status says how the verification ended, with the reason when it did not
// pass.
func (r *Report) Status() (Status, string) {
	if len(r.ScorerFailures) > 0 {
		msgs := make([]string, len(r.ScorerFailures))
		for i, f := range r.ScorerFailures {
			msgs[i] = f.String()
		}
		return StatusHostFailed, "the host could not run a scorer: " + strings.Join(msgs, "; ")
	}
	if len(r.Errors) > 0 {
		names := make([]string, len(r.Errors))
		for i, e := range r.Errors {
			names[i] = e.Candidate
		}
		return StatusInvalidInput, "not verified, its input could not be read: " + strings.Join(names, ", ")
	}
	if r.UnreadableTurns > 0 {
		return StatusInvalidInput, fmt.Sprintf("%d %s could not be read; %s recorded as unscored", r.UnreadableTurns, plural(r.UnreadableTurns, "turn", "turns"), plural(r.UnreadableTurns, "it is", "they are"))
	}
	for _, c := range r.Candidates {
		if !c.Gates.Passed {
			return StatusGateFailed, ""
		}
	}
	return StatusPassed, ""
}

// DefaultScorerErrorShare is the share of a candidate's turns a scorer may
// fail to score (scorer_error) before the host counts the scorer as unable
// to run.
const DefaultScorerErrorShare = 0.5

// scorerFailures lists the scorers that produced no result for every one of
// the candidate's turns they were asked to score, or for more than share of
// them. A turn is charged to its task's scorer (a composite task to
// composite, whose diagnostics name the upstream scorer that failed); a turn
// whose input could not be read is charged to no scorer.
func scorerFailures(candidate string, rs []TurnResult, scorerOf func(label string) string, share float64) []ScorerFailure {
	turns, failed := map[string]int{}, map[string]int{}
	for _, r := range rs {
		id := scorerOf(r.Label)
		if r.Status == score.StatusMissing || id == "" {
			continue
		}
		broke := r.Status == score.StatusUnscored && hasTag(r.FailureTags, score.TagScorerError)
		if r.Status == score.StatusUnscored && !broke {
			continue
		}
		turns[id]++
		if broke {
			failed[id]++
		}
	}
	var out []ScorerFailure
	for id, n := range turns {
		f := failed[id]
		if f > 0 && (f == n || float64(f)/float64(n) > share) {
			out = append(out, ScorerFailure{Candidate: candidate, Scorer: id, Failed: f, Turns: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Scorer < out[j].Scorer })
	return out
}

func hasTag(tags []string, tag string) bool {
	for _, t := range tags {
		if t == tag {
			return true
		}
	}
	return false
}

// Frontier is the Pareto frontier of the eligible candidates; with
// pareto_filter off, every eligible candidate, best mean score first.
func Frontier(pareto bool, sums []score.Summary) []string {
	if pareto {
		f := score.Frontier(sums)
		if f == nil {
			f = []string{}
		}
		return f
	}
	var el []score.Summary
	for _, s := range sums {
		if s.Eligible {
			el = append(el, s)
		}
	}
	sort.SliceStable(el, func(i, j int) bool { return el[i].MeanScore > el[j].MeanScore })
	out := []string{}
	for _, s := range el {
		out = append(out, s.Candidate)
	}
	return out
}

// NotDistinguishable lists, in frontier order, the pairs of frontier
// candidates whose mean_score intervals overlap: not distinguishable on
// this data (docs/scoring.md).
func NotDistinguishable(frontier []string, sums []score.Summary) [][2]string {
	ci := make(map[string][]float64, len(sums))
	for _, s := range sums {
		ci[s.Candidate] = s.MeanScoreCI95
	}
	out := [][2]string{}
	for i, a := range frontier {
		for _, b := range frontier[i+1:] {
			if score.Overlap(ci[a], ci[b]) {
				out = append(out, [2]string{a, b})
			}
		}
	}
	return out
}

// regressionDrop is how far a task's score must fall against the baseline
// to be listed as a per-task regression; whether the candidate regressed is
// the paired comparison's call (score.Compare).
const regressionDrop = 0.05

// scoreTurns are the summary's view of turn results.
func scoreTurns(rs []TurnResult) []score.Turn {
	ts := make([]score.Turn, len(rs))
	for i := range rs {
		ts[i] = rs[i].scoreTurn()
	}
	return ts
}

// taskScores maps each task with a scored epoch to its score (the mean over
// its scored epochs) and weight.
func taskScores(rs []TurnResult) map[string]score.Sample {
	return score.TaskMeans(scoreTurns(rs))
}

// regressed lists the per-task regressions: the tasks whose score fell by
// more than regressionDrop against the baseline (a scored baseline task
// with no scored epoch now regressed too), in result order.
func regressed(rs []TurnResult, baseline map[string]score.Sample) []string {
	now := taskScores(rs)
	epochs, status := map[string]int{}, map[string]score.Status{}
	var order []string
	for _, r := range rs {
		if _, seen := epochs[r.Label]; !seen {
			order = append(order, r.Label)
			status[r.Label] = r.Status
		}
		epochs[r.Label]++
	}
	var out []string
	for _, l := range order {
		b, ok := baseline[l]
		if !ok {
			continue
		}
		m, scored := now[l]
		switch {
		case !scored:
			out = append(out, fmt.Sprintf("%s: %s (baseline %.3f)", l, status[l], b.Value))
		case b.Value-m.Value <= regressionDrop+1e-9:
		case epochs[l] == 1:
			out = append(out, fmt.Sprintf("%s: turn score %.3f, baseline %.3f", l, m.Value, b.Value))
		default:
			out = append(out, fmt.Sprintf("%s: mean score %.3f over %d epochs, baseline %.3f", l, m.Value, epochs[l], b.Value))
		}
	}
	return out
}
