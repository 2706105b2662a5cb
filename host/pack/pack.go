package pack

import (
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/scorer"
)

// Pack is a loaded, valid eval pack.
type Pack struct {
	Path          string // as given to Load
	SHA256        string // hex sha256 of the file's bytes
	Source        []byte // the file's bytes, for rendering diagnostics
	SchemaVersion string
	Company       Company
	Personas      []string
	ToolCatalog   []string // pack-wide tool_catalog
	Tasks         []*Task
	Scoring       Scoring
	// Governance is the governance block, defaults filled in.
	Governance Governance
	// KillCriteria are the pre-registered kill criteria (docs/governance.md).
	KillCriteria []*KillCriterion
}

// Name is the pack's display name: the company name, else its id, else the path.
func (p *Pack) Name() string {
	switch {
	case p.Company.Name != "":
		return p.Company.Name
	case p.Company.ID != "":
		return p.Company.ID
	}
	return p.Path
}

// Task returns the task with the given label, or nil.
func (p *Pack) Task(label string) *Task {
	for _, t := range p.Tasks {
		if t.Label == label {
			return t
		}
	}
	return nil
}

// Company is the pack's company block.
type Company struct {
	ID      string
	Name    string
	APIBase string
}

// Task is one pack task.
type Task struct {
	// Where the task and its KPIs are written (Pos, KPIPos; nil after
	// DropPositions), and its position in its pack's Tasks (Index): a run
	// keeps every Task of its pack, and what only the load's diagnostics
	// read is not kept in each (docs/performance.md, fourteenth round).
	pos   *taskPos
	index int32

	Label     string
	Persona   string
	Prompt    string
	Scorer    scorer.ID
	Weight    float64 // default 1.0
	SliceTags []string
	// KPIs are the KPI values as decoded from YAML into JSON types. Tasks
	// with equal KPIs share one map: read only. KPIPos says where each is.
	KPIs        map[string]any
	Safety      Safety
	ToolCatalog []string // the task's own tool_catalog (see Pack.ToolCatalog)
	CEL         []*CELCheck
}

// taskPos is where a task and its KPIs are written.
type taskPos struct {
	file      string
	line, col int32
	kpis      []kpiPos
}

// Pos is where the task is written: its "- " item; the zero Pos after
// DropPositions.
func (t *Task) Pos() diag.Pos {
	if t.pos == nil {
		return diag.Pos{}
	}
	return diag.Pos{File: t.pos.file, Line: int(t.pos.line), Col: int(t.pos.col)}
}

// Index is the task's position in the Tasks of the pack it was loaded
// with; 0 for a Task made otherwise. A reader keeping something a task
// (kpi.Set) keeps it by index and checks the pack's Tasks[Index] is the
// task before it trusts it.
func (t *Task) Index() int { return int(t.index) }

// kpiPos is where a KPI key and its value are written, in the task's file.
type kpiPos struct {
	key                 string
	keyLine, keyCol     int32
	valueLine, valueCol int32
}

// KPIPos returns the positions of KPI key and of its value.
func (t *Task) KPIPos(key string) (keyPos, valuePos diag.Pos, ok bool) {
	if t.pos == nil {
		return diag.Pos{}, diag.Pos{}, false
	}
	for _, k := range t.pos.kpis {
		if k.key == key {
			return diag.Pos{File: t.pos.file, Line: int(k.keyLine), Col: int(k.keyCol)},
				diag.Pos{File: t.pos.file, Line: int(k.valueLine), Col: int(k.valueCol)}, true
		}
	}
	return diag.Pos{}, diag.Pos{}, false
}

// Safety is a task's safety block.
type Safety struct {
	RequiresHuman bool
	MaxToolCalls  *int
}

// CELCheck is one CEL KPI check as written in the pack.
type CELCheck struct {
	Pos         diag.Pos // the check's "- " item
	Name        string
	Expr        string
	ExprPos     ScalarPos // where the expression's text sits in the file
	Message     string
	MessageExpr string
	MessagePos  ScalarPos // of message_expr, when set
	Weight      float64   // default 1
	FailureTag  string
}

// ScalarPos maps an offset inside a YAML scalar's value back to a file
// position, for plain, quoted and block scalars alike.
type ScalarPos struct {
	Pos   diag.Pos // where the scalar's token starts (quote or block indicator included)
	Style ScalarStyle
	// Lines holds, for each line of the value, the file position of its first
	// character; filled for block scalars and multi-line flow scalars.
	Lines []diag.Pos
	// Runs maps the value to the file: run i starts at rune offset
	// Runs[i].Offset of the value, at Runs[i].Pos, and the runes after it sit
	// one column each to the right, until the next run. Use At.
	Runs []ScalarRun
}

// ScalarRun is one stretch of a scalar's value written contiguously on one
// line of the file.
type ScalarRun struct {
	Offset int      // rune offset in the value
	Pos    diag.Pos // where that rune is in the file
}

// ScalarStyle is how a scalar was written.
type ScalarStyle int

const (
	Plain ScalarStyle = iota
	SingleQuoted
	DoubleQuoted
	Literal // |
	Folded  // >
)

// Scoring is the pack's scoring block.
type Scoring struct {
	ProcessWeight   float64
	KPIWeight       float64
	MinMeanScore    float64
	MinFinalizeRate float64
	MaxErrorRate    float64
	MaxMeanLatencyS *float64
	MaxMeanCostUSD  *float64
	ParetoFilter    bool
	Promotion       Promotion
	// PassThreshold is the turn score a turn needs to pass (pass@k,
	// pass^k, flaky tasks); nil means 1.0.
	PassThreshold *float64
	// MinPassHatK is the optional min_pass_hat_k gate.
	MinPassHatK *PassHatK
}

// PassHatK is scoring.min_pass_hat_k: pass^K must be at least Value.
type PassHatK struct {
	K     int
	Value float64
}

// Promotion is the scoring.promotion block.
type Promotion struct {
	RequireNoRegression bool
	ShadowRuns          int
	RollbackOn          []string
	// RegressionMinDelta: a candidate regressed against its baseline when
	// the paired delta's 95% interval lies entirely below -RegressionMinDelta.
	RegressionMinDelta float64
}
