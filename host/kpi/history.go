package kpi

import (
	"fmt"
	"reflect"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	"cel.dev/cel-go/ext"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/pkg/diag"
)

// HistoryRun is one element of the kill-criteria variable history: one
// finished verification of the candidate against the pack
// (docs/governance.md). Field names in CEL are the json tags.
type HistoryRun struct {
	RunID         int64          `json:"run_id"`
	CreatedAt     time.Time      `json:"created_at"`
	N             int            `json:"n"`
	MeanScore     float64        `json:"mean_score"`
	FinalizeRate  float64        `json:"finalize_rate"`
	ErrorRate     float64        `json:"error_rate"`
	MeanLatencyS  float64        `json:"mean_latency_s"` // 0 when unknown; see HasLatency
	MeanCostUSD   float64        `json:"mean_cost_usd"`  // 0 when unknown; see HasCost
	HasLatency    bool           `json:"has_latency"`
	HasCost       bool           `json:"has_cost"`
	FailureTags   map[string]int `json:"failure_tags"`
	Verdict       string         `json:"verdict"`
	GatesPassed   bool           `json:"gates_passed"`
	ScorerVersion string         `json:"scorer_version"`
}

// ScorerReview is the value of one scorer in the kill-criteria variable
// scorers: what review and the probe know of it.
type ScorerReview struct {
	OverrideRate     float64 `json:"override_rate"`
	Reviews          int     `json:"reviews"`
	Suspect          bool    `json:"suspect"`
	Nondeterministic bool    `json:"nondeterministic"`
}

// Kill-criteria variable names.
const (
	varHistory = "history"
	varScorers = "scorers"
)

// killEvalLimit bounds one kill criterion's evaluation cost.
const killEvalLimit = 1_000_000

// historyEnv is the environment of kill criteria: history and scorers, and
// the checks' environment's libraries (without sets and the assay helpers).
func historyEnv() (*cel.Env, error) {
	opts := []cel.EnvOption{
		ext.NativeTypes(ext.ParseStructTag("json"), reflect.TypeFor[HistoryRun](), reflect.TypeFor[ScorerReview]()),
		cel.Variable(varHistory, cel.ListType(cel.ObjectType("kpi.HistoryRun"))),
		cel.Variable(varScorers, cel.MapType(cel.StringType, cel.ObjectType("kpi.ScorerReview"))),
	}
	env, err := cel.NewEnv(append(opts, libraries()...)...)
	if err != nil {
		return nil, fmt.Errorf("building the kill-criteria CEL environment: %w", err)
	}
	return env, nil
}

// KillProgram is a compiled kill criterion.
type KillProgram struct {
	Criterion *pack.KillCriterion
	prg       cel.Program
}

// CompileKillCriteria type-checks every kill criterion of p; each must be
// bool. Problems are reported at the position of the offending token.
func CompileKillCriteria(p *pack.Pack) ([]*KillProgram, diag.List) {
	if len(p.KillCriteria) == 0 {
		return nil, nil
	}
	env, err := historyEnv()
	if err != nil {
		return nil, diag.List{diag.Errorf(p.KillCriteria[0].Pos, CodeCompile, "%v", err)}
	}
	var out []*KillProgram
	var ds diag.List
	for _, kc := range p.KillCriteria {
		at := PosFunc(kc.ExprPos.At)
		source := common.NewTextSource(kc.Expr)
		parsed, iss := env.ParseSource(source)
		if iss.Err() != nil {
			ds = append(ds, issueDiags(source, iss, at)[:1]...)
			continue
		}
		checked, iss := env.Check(parsed)
		if iss.Err() != nil {
			ds = append(ds, issueDiags(source, iss, at)...)
			continue
		}
		if !isBool(checked.OutputType()) {
			ds = append(ds, diag.Errorf(at(0), CodeType, "kill criterion %q has type %s; it must be bool (true fires it)",
				kc.Name, cel.FormatCELType(checked.OutputType())))
			continue
		}
		prg, err := env.Program(checked, cel.CostLimit(killEvalLimit))
		if err != nil {
			ds = append(ds, diag.Errorf(at(0), CodeCompile, "planning the program: %v", err))
			continue
		}
		out = append(out, &KillProgram{Criterion: kc, prg: prg})
	}
	if ds.HasErrors() {
		return nil, ds
	}
	return out, ds
}

// Eval reports whether the criterion fires on history and scorers.
func (k *KillProgram) Eval(history []HistoryRun, scorers map[string]ScorerReview) (bool, error) {
	if history == nil {
		history = []HistoryRun{}
	}
	if scorers == nil {
		scorers = map[string]ScorerReview{}
	}
	v, _, err := k.prg.Eval(map[string]any{varHistory: history, varScorers: scorers})
	if err != nil {
		return false, fmt.Errorf("evaluate kill criterion %q: %w", k.Criterion.Name, err)
	}
	b, ok := v.Value().(bool)
	if !ok {
		return false, fmt.Errorf("evaluate kill criterion %q: got %v, want a bool", k.Criterion.Name, v)
	}
	return b, nil
}
