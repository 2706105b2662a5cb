package score

import (
	"fmt"
	"slices"
	"strconv"
)

// Status says whether a pack task's turn was scored.
type Status string

const (
	StatusScored   Status = "scored"   // the turn ran and its scorer scored it
	StatusUnscored Status = "unscored" // the turn ran but its scorer could not score it
	StatusMissing  Status = "missing"  // the pack task has no turn in the run
)

// Turn is one pack task's outcome in a candidate's run, as Summarize reads it.
type Turn struct {
	Label        string   `json:"label"`
	Epoch        int      `json:"epoch"` // the turn's epoch of its task, from 1; 0 counts as 1
	Persona      string   `json:"persona"`
	Weight       float64  `json:"weight"` // the task's weight; a non-positive weight counts as 1
	SliceTags    []string `json:"slice_tags"`
	Status       Status   `json:"status"`
	ProcessScore float64  `json:"process_score"`
	KPIScore     float64  `json:"kpi_score"`
	TurnScore    float64  `json:"turn_score"`
	Finalized    bool     `json:"finalized"`
	Error        bool     `json:"error"`
	LatencyS     *float64 `json:"latency_s"`
	CostUSD      *float64 `json:"cost_usd"`
	ToolCalls    int      `json:"tool_calls"` // tool invocations (tool_start events)
	FailureTags  []string `json:"failure_tags"`
}

// Thresholds are the promotion gates of a pack's scoring block.
type Thresholds struct {
	MinMeanScore    float64
	MinFinalizeRate float64
	MaxErrorRate    float64
	MaxMeanLatencyS *float64 // nil: no latency gate
	MaxMeanCostUSD  *float64 // nil: no cost gate
	// PassThreshold is the turn score a scored turn needs to pass; nil
	// means DefaultPassThreshold.
	PassThreshold *float64
	// MinPassHatK, when set, is the min_pass_hat_k gate.
	MinPassHatK *PassHatGate
	// Seed and Resamples drive the bootstrap of mean_score_ci95; Resamples
	// <= 0 means DefaultResamples.
	Seed      uint64
	Resamples int
}

// PassHatGate is scoring.min_pass_hat_k: pass^K must be at least Value.
type PassHatGate struct {
	K     int
	Value float64
}

// Gate names, as they appear in Summary.Gates.Failed.
const (
	GateMinMeanScore    = "min_mean_score"
	GateMinFinalizeRate = "min_finalize_rate"
	GateMaxErrorRate    = "max_error_rate"
	GateMaxMeanLatencyS = "max_mean_latency_s"
	GateMaxMeanCostUSD  = "max_mean_cost_usd"
	GateMinPassHatK     = "min_pass_hat_k"
	GateSafety          = "safety"   // value: turns tagged safety_gate_failed; threshold 0
	GateUnscored        = "unscored" // value: unscored turns; threshold 0
	GateMissing         = "missing"  // value: missing pack tasks; threshold 0
)

// Summary is one candidate's aggregate over a pack (summary.json's
// candidates[]).
type Summary struct {
	Candidate     string           `json:"candidate"`
	N             int              `json:"n"` // turns that ran: scored + unscored
	MeanScore     float64          `json:"mean_score"`
	FinalizeRate  float64          `json:"finalize_rate"`
	ErrorRate     float64          `json:"error_rate"`
	MeanLatencyS  *float64         `json:"mean_latency_s"` // null when no turn has a latency
	MeanToolCalls float64          `json:"mean_tool_calls"`
	MeanCostUSD   *float64         `json:"mean_cost_usd"` // null unless every turn has a cost
	Unscored      int              `json:"unscored"`
	Missing       int              `json:"missing"`
	Slices        map[string]Slice `json:"slices"`
	FailureTags   map[string]int   `json:"failure_tags"`
	ScorerVersion string           `json:"scorer_version"` // set by the caller
	Gates         Gates            `json:"gates"`
	Eligible      bool             `json:"eligible"` // every gate passed

	// Epochs is the most epochs any task ran; EpochsMin the fewest, the
	// largest k of PassAtK and PassHatK (0 when no task ran).
	Epochs    int `json:"epochs"`
	EpochsMin int `json:"epochs_min"`
	// MeanScoreCI95 is the percentile bootstrap 95% interval of MeanScore
	// over tasks [lo, hi]; null when no task was scored.
	MeanScoreCI95 []float64 `json:"mean_score_ci95"`
	// PassAtK and PassHatK are pass@k and pass^k keyed by k ("1", "2", ...).
	PassAtK  map[string]float64 `json:"pass_at_k"`
	PassHatK map[string]float64 `json:"pass_hat_k"`
	// FlakyTasks are the tasks whose epochs disagree on pass, sorted.
	FlakyTasks []string `json:"flaky_tasks"`
}

// Slice is the aggregate over the scored turns whose task has a slice tag.
type Slice struct {
	N         int     `json:"n"`
	MeanScore float64 `json:"mean_score"` // weighted by task weight
}

// Gates is the outcome of the promotion gates.
type Gates struct {
	Passed bool          `json:"passed"`
	Failed []GateFailure `json:"failed"` // never nil: [] in JSON
	// Notes say why a failed gate could not be evaluated (its value is
	// then 0 and means nothing).
	Notes []string `json:"notes,omitempty"`
}

// GateFailure is one failed gate with the candidate's value and the threshold.
type GateFailure struct {
	Gate      string  `json:"gate"`
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
}

// Summarize aggregates a candidate's turns (docs/scoring.md):
//   - n counts the turns that ran (scored and unscored); missing tasks are
//     counted in Missing only;
//   - mean_score is the task-weighted mean of turn_score over scored turns
//     (an unscored turn is never averaged in as 0), 0 when none is scored;
//   - finalize_rate, error_rate and mean_tool_calls are over the n turns
//     that ran (their traces say it whether or not a scorer scored them);
//   - mean_latency_s is the mean over the turns that ran with a known
//     latency, null when none has one; mean_cost_usd is set only when every
//     turn that ran has a cost;
//   - slices are over scored turns, weighted like mean_score;
//   - failure_tags counts each tag over every turn given.
//
// The gates (inclusive) are, in this order: mean_score >= min_mean_score,
// finalize_rate >= min_finalize_rate, error_rate <= max_error_rate,
// mean_latency_s <= max_mean_latency_s when set and known, mean_cost_usd <=
// max_mean_cost_usd when set and known, no turn tagged safety_gate_failed,
// no unscored turn, no missing task. ScorerVersion is left for the caller.
func Summarize(candidate string, turns []Turn, th Thresholds) Summary {
	s := Summary{
		Candidate:   candidate,
		Slices:      map[string]Slice{},
		FailureTags: map[string]int{},
	}
	var (
		finalized, errored int
		latSum, costSum    float64
		latN, costN, tools int
		safetyFailed       int
	)
	passAt := DefaultPassThreshold
	if th.PassThreshold != nil {
		passAt = *th.PassThreshold
	}
	tasks := byTask(turns)
	for i, t := range turns {
		for _, tag := range MergeTags(t.FailureTags) {
			s.FailureTags[tag]++
			if tag == TagSafetyGateFailed {
				safetyFailed++
			}
		}
		switch t.Status {
		case StatusMissing:
			s.Missing++
			continue
		case StatusUnscored:
			s.Unscored++
		default:
			if ge(t.TurnScore, passAt) {
				tasks.of(i, t).Passed++
			}
		}
		tasks.of(i, t).Ran++
		s.N++
		if t.Finalized {
			finalized++
		}
		if t.Error {
			errored++
		}
		tools += t.ToolCalls
		if t.LatencyS != nil {
			latSum += *t.LatencyS
			latN++
		}
		if t.CostUSD != nil {
			costSum += *t.CostUSD
			costN++
		}
	}
	if s.N > 0 {
		n := float64(s.N)
		s.FinalizeRate = float64(finalized) / n
		s.ErrorRate = float64(errored) / n
		s.MeanToolCalls = float64(tools) / n
		if costN == s.N {
			s.MeanCostUSD = ptr(costSum / n)
		}
	}
	if latN > 0 {
		s.MeanLatencyS = ptr(latSum / float64(latN))
	}
	s.taskStats(tasks, th)
	s.Gates = gates(&s, th, safetyFailed)
	s.Eligible = s.Gates.Passed
	return s
}

// taskTurns are a candidate's turns grouped by task: the tasks in the order
// of their first turn, in one slice (no allocation a task: a run's summary
// is made while its results are held; docs/performance.md, "Verifying many
// small turns"), each with its slice tags.
type taskTurns struct {
	all  []TaskEpochs     // in the order of their first turn
	at   map[string]int   // index in all by taskKey
	tags map[int][]string // by index in all: the slice tags of the tasks that have any
}

// of is the task of turns[i], t.
func (g *taskTurns) of(i int, t Turn) *TaskEpochs { return &g.all[g.at[taskKey(i, t)]] }

// byTask groups the scored turn scores by task label; a turn without a
// label is a task of its own.
func byTask(turns []Turn) taskTurns {
	g := taskTurns{at: make(map[string]int, len(turns)), all: make([]TaskEpochs, 0, len(turns))}
	for i, t := range turns {
		key := taskKey(i, t)
		k, ok := g.at[key]
		if !ok {
			k = len(g.all)
			g.all = append(g.all, TaskEpochs{Label: t.Label, Weight: weightOf(t.Weight)})
			g.at[key] = k
			if tags := MergeTags(t.SliceTags); len(tags) > 0 {
				if g.tags == nil {
					g.tags = map[int][]string{}
				}
				g.tags[k] = tags
			}
		}
		if t.Status == StatusScored {
			te := &g.all[k]
			te.Scores = append(te.Scores, t.TurnScore)
		}
	}
	return g
}

func taskKey(i int, t Turn) string {
	if t.Label == "" {
		return "\x00" + strconv.Itoa(i)
	}
	return t.Label
}

// taskStats sets mean_score (the task-weighted mean of the task means over
// scored epochs), the slices, the interval, pass@k, pass^k and the flaky
// tasks, the tasks in the order of their first turn (with one epoch, every
// sum runs in the order it always has).
func (s *Summary) taskStats(g taskTurns, th Thresholds) {
	var (
		wSum, wScore       float64
		sliceW, sliceScore = map[string]float64{}, map[string]float64{}
		sliceN             = map[string]int{}
		samples            []Sample
	)
	for k := range g.all {
		t := &g.all[k]
		m, ok := t.Mean()
		if !ok {
			continue
		}
		wSum += t.Weight
		wScore += t.Weight * m
		samples = append(samples, Sample{Value: m, Weight: t.Weight})
		for _, tag := range g.tags[k] {
			sliceN[tag] += len(t.Scores)
			sliceW[tag] += t.Weight
			sliceScore[tag] += t.Weight * m
		}
	}
	if wSum > 0 {
		s.MeanScore = wScore / wSum
	}
	for tag, n := range sliceN {
		s.Slices[tag] = Slice{N: n, MeanScore: sliceScore[tag] / sliceW[tag]}
	}
	s.MeanScoreCI95 = Bootstrap(samples, th.Resamples, th.Seed)
	r := Reliable(g.all)
	s.Epochs, s.EpochsMin = r.MaxEpochs, r.MinEpochs
	s.PassAtK, s.PassHatK, s.FlakyTasks = r.PassAtK, r.PassHatK, r.Flaky
}

func gates(s *Summary, th Thresholds, safetyFailed int) Gates {
	failed := []GateFailure{}
	var notes []string
	check := func(ok bool, gate string, value, threshold float64) {
		if !ok {
			failed = append(failed, GateFailure{Gate: gate, Value: value, Threshold: threshold})
		}
	}
	check(ge(s.MeanScore, th.MinMeanScore), GateMinMeanScore, s.MeanScore, th.MinMeanScore)
	check(ge(s.FinalizeRate, th.MinFinalizeRate), GateMinFinalizeRate, s.FinalizeRate, th.MinFinalizeRate)
	check(le(s.ErrorRate, th.MaxErrorRate), GateMaxErrorRate, s.ErrorRate, th.MaxErrorRate)
	if th.MaxMeanLatencyS != nil && s.MeanLatencyS != nil {
		check(le(*s.MeanLatencyS, *th.MaxMeanLatencyS), GateMaxMeanLatencyS, *s.MeanLatencyS, *th.MaxMeanLatencyS)
	}
	if th.MaxMeanCostUSD != nil && s.MeanCostUSD != nil {
		check(le(*s.MeanCostUSD, *th.MaxMeanCostUSD), GateMaxMeanCostUSD, *s.MeanCostUSD, *th.MaxMeanCostUSD)
	}
	if g := th.MinPassHatK; g != nil {
		v, ok := s.PassHatK[strconv.Itoa(g.K)]
		if !ok {
			notes = append(notes, fmt.Sprintf("gate %s failed unevaluated: pass^%d needs %d epochs of every task that ran; the fewest is %d",
				GateMinPassHatK, g.K, g.K, s.EpochsMin))
		}
		check(ok && ge(v, g.Value), GateMinPassHatK, v, g.Value)
	}
	check(safetyFailed == 0, GateSafety, float64(safetyFailed), 0)
	check(s.Unscored == 0, GateUnscored, float64(s.Unscored), 0)
	check(s.Missing == 0, GateMissing, float64(s.Missing), 0)
	return Gates{Passed: len(failed) == 0, Failed: failed, Notes: notes}
}

func ptr[T any](v T) *T { return &v }

// Frontier returns the ids of the eligible candidates no other eligible
// candidate dominates, sorted by id. The dimensions: maximize mean_score and
// finalize_rate; minimize error_rate, mean_latency_s (only when every
// eligible candidate has it), mean_cost_usd (likewise) and mean_tool_calls.
// a dominates b when a is at least as good on every dimension and strictly
// better on one, so equal candidates both stay.
func Frontier(cands []Summary) []string {
	var el []*Summary
	for i := range cands {
		if cands[i].Eligible {
			el = append(el, &cands[i])
		}
	}
	withLat, withCost := true, true
	for _, c := range el {
		withLat = withLat && c.MeanLatencyS != nil
		withCost = withCost && c.MeanCostUSD != nil
	}
	// dims gives each dimension as a value to maximize.
	dims := func(c *Summary) []float64 {
		d := []float64{c.MeanScore, c.FinalizeRate, -c.ErrorRate, -c.MeanToolCalls}
		if withLat {
			d = append(d, -*c.MeanLatencyS)
		}
		if withCost {
			d = append(d, -*c.MeanCostUSD)
		}
		return d
	}
	d := make([][]float64, len(el)) // once each: compared pairwise, they were half of a large run's garbage
	for i, c := range el {
		d[i] = dims(c)
	}
	out := []string{}
	for j, b := range el {
		dominated := false
		for i := range el {
			if i != j && dominates(d[i], d[j]) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, b.Candidate)
		}
	}
	slices.Sort(out)
	return out
}

func dominates(a, b []float64) bool {
	better := false
	for i := range a {
		if gt(b[i], a[i]) {
			return false
		}
		if gt(a[i], b[i]) {
			better = true
		}
	}
	return better
}
