package kpi

import (
	"fmt"
	"reflect"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/ext"

	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/pkg/trace"
)

// Turn is what the CEL variable turn holds: the derived trace turn plus what
// the run recorded about it. Field names in CEL are the json tags.
type Turn struct {
	Label         string           `json:"label"`
	Persona       string           `json:"persona"`
	Answer        string           `json:"answer"`
	StreamedText  string           `json:"streamed_text"`
	TextLen       int              `json:"text_len"`
	Finalized     bool             `json:"finalized"`
	Error         bool             `json:"error"`
	ErrorMessages []string         `json:"error_messages"`
	LatencyS      float64          `json:"latency_s"` // 0 when unknown; see LatencyKnown
	CostUSD       float64          `json:"cost_usd"`  // 0 when unknown; see CostKnown
	LatencyKnown  bool             `json:"has_latency"`
	CostKnown     bool             `json:"has_cost"`
	ToolCalls     []trace.ToolCall `json:"tool_calls"`
	Tools         []string         `json:"tools"` // the tool_calls' names, in order
	Phases        []string         `json:"phases"`
	Events        []trace.Event    `json:"events"`
	ToolEvents    int              `json:"tool_events"`
	LoopIters     int              `json:"loop_iters"`
	SubAgents     int              `json:"sub_agents"`
	TaskID        string           `json:"task_id"`
	TaskAction    string           `json:"task_action"`
}

// Task is what the CEL variable task holds: the pack task being checked.
type Task struct {
	Label   string         `json:"label"`
	Persona string         `json:"persona"`
	Scorer  string         `json:"scorer"`
	Weight  float64        `json:"weight"`
	Tags    []string       `json:"tags"` // slice_tags
	KPIs    map[string]any `json:"kpis"`
}

// Scorer is what the CEL variable scorer holds: the task scorer's score and
// the score of each of its checks by KPI key.
type Scorer struct {
	Score  float64            `json:"score"`
	Checks map[string]float64 `json:"checks"`
}

// Variable names and CEL type names.
const (
	varTurn   = "turn"
	varTask   = "task"
	varState  = "state"
	varBefore = "before"
	varScorer = "scorer"
)

// Pinned library versions: raising one is a deliberate change, because it
// changes what a pack may call.
const (
	stringsVersion    = 5 // 5: cost models for every strings function
	listsVersion      = 5 // 3+: cost models
	mathVersion       = 3 // 3: cost models
	setsVersion       = 0
	bindingsVersion   = 1
	twoVarVersion     = 0
	optionalVersion   = 4
	expressionMaxSize = 8 << 10 // code points per expression
)

var (
	baseOnce sync.Once
	baseEnv  *cel.Env
	baseErr  error
)

// Env returns the process-wide base environment (built on first use).
func Env() (*cel.Env, error) {
	baseOnce.Do(func() { baseEnv, baseErr = newEnv() })
	return baseEnv, baseErr
}

// libraries are the pinned CEL libraries and limits shared by the checks'
// environment and the kill criteria's (historyEnv).
func libraries() []cel.EnvOption {
	return []cel.EnvOption{
		ext.Strings(ext.StringsVersion(stringsVersion)),
		ext.Lists(ext.ListsVersion(listsVersion)),
		ext.Math(ext.MathVersion(mathVersion)),
		ext.Bindings(ext.BindingsVersion(bindingsVersion)),
		ext.TwoVarComprehensions(ext.TwoVarComprehensionsVersion(twoVarVersion)),
		cel.OptionalTypes(cel.OptionalTypesVersion(optionalVersion)),
		cel.ParserExpressionSizeLimit(expressionMaxSize),
		cel.CrossTypeNumericComparisons(true),
	}
}

func newEnv() (*cel.Env, error) {
	opts := []cel.EnvOption{
		ext.NativeTypes(
			ext.ParseStructTag("json"),
			reflect.TypeFor[Turn](), reflect.TypeFor[Task](), reflect.TypeFor[Scorer](),
			reflect.TypeFor[companyos.Snapshot](),
		),
		cel.Variable(varTurn, cel.ObjectType("kpi.Turn")),
		cel.Variable(varTask, cel.ObjectType("kpi.Task")),
		cel.Variable(varState, cel.ObjectType("sdk.Snapshot")),
		cel.Variable(varBefore, cel.ObjectType("sdk.Snapshot")),
		cel.Variable(varScorer, cel.ObjectType("kpi.Scorer")),
		ext.Sets(ext.SetsVersion(setsVersion)),
	}
	opts = append(opts, libraries()...)
	opts = append(opts, helpers()...)
	env, err := cel.NewEnv(opts...)
	if err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	// cel-go v0.33.2 builds the checker's symbol catalog (for "did you mean"
	// hints) lazily on the first undeclared reference, and copies it unguarded
	// when a comprehension opens a scope: concurrent Checks race. Reporting
	// one undeclared reference now builds the catalog before any sharing.
	if _, iss := env.Compile("assay_catalog_warmup"); iss.Err() == nil {
		return nil, fmt.Errorf("building the CEL environment: the warm-up expression compiled")
	}
	return env, nil
}
