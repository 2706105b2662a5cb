package sdk

import (
	"context"
	"encoding/json"
	"time"
)

// Scorer is a deterministic verifier of agent turns. It stays at two methods:
// new capabilities arrive as optional interfaces or new fields, never as new
// methods.
type Scorer interface {
	// Describe returns the scorer's constant description; no side effects.
	Describe() Description
	// Score scores one case. It must be safe for concurrent use and
	// deterministic, and return ctx's error once ctx is done. Problems with
	// the input go in Result.Diagnostics; an error means the scorer broke.
	Score(ctx context.Context, c *Case) (*Result, error)
}

// SDKVersion is the version of this SDK, reported in every description a
// plugin serves (Description.SDKVersion).
const SDKVersion = "1.5.0"

// ID names a scorer. It is snake_case and spelled the same in the manifest,
// the pack YAML, the schema enum, the DB CHECK and the binary name
// (assay-scorer-<id>).
type ID string

// Need is a part of a case a scorer reads. The host sends only what a scorer
// declares.
type Need string

const (
	NeedTrace       Need = "trace"
	NeedAnswer      Need = "answer"
	NeedStateBefore Need = "state_before"
	NeedStateAfter  Need = "state_after"
	NeedUpstream    Need = "upstream"
	// NeedEvents adds the trace's per-line events (Turn.Events) to what
	// NeedTrace sends. Most scorers read the derived turn (tool calls,
	// answer, phases) and never the line-by-line events, which are most of a
	// trace's bytes, so they are sent only to a scorer that asks.
	NeedEvents Need = "events"
	// NeedNoStreamedText leaves the streamed text (Turn.StreamedText) out
	// of what NeedTrace and NeedEvents send; Turn.TextLen still counts it.
	// In a streaming harness's trace the text is most of a derived turn's
	// bytes, so a scorer that never reads it declares this and its batches
	// shrink to a fraction. Hosts before SDK 1.2 ignore it and send the
	// text, which such a scorer does not read: declaring it is always safe.
	NeedNoStreamedText Need = "no_streamed_text"
	// NeedNoToolArgs leaves the tool calls' arguments out of what
	// NeedTrace and NeedEvents send: every ToolCall keeps its Name, and
	// its Args is nil (reading a nil map finds nothing, as in an empty
	// one). Arguments are most of a derived turn's bytes once the streamed
	// text is left out, so a scorer that reads only tool names declares
	// this. Hosts before SDK 1.3 ignore it and send the arguments, which
	// such a scorer does not read: declaring it is always safe.
	NeedNoToolArgs Need = "no_tool_args"
)

// ValueType is the type of a KPI value in a pack, checked at pack load.
type ValueType string

const (
	Bool          ValueType = "bool"            // true / false
	Number        ValueType = "number"          // any number
	Integer       ValueType = "integer"         // a whole number
	String        ValueType = "string"          // a string
	StringList    ValueType = "string_list"     // a list of strings
	StringListMap ValueType = "string_list_map" // a map of string -> list of strings
	Any           ValueType = "any"             // anything; the scorer checks it
)

// KPI is one KPI key a scorer understands.
type KPI struct {
	Key         string    `json:"key"`
	ValueType   ValueType `json:"value_type"`
	Description string    `json:"description,omitempty"`
	FailureTag  string    `json:"failure_tag,omitempty"` // the tag a failed check of this key carries
	// ArgsRead, on a StringListMap KPI (tool name -> argument keys),
	// declares that the scorer reads no tool-call argument but those its
	// task's value of this key lists: the arguments of the listed tools'
	// calls under the listed keys. A host then sends of each case's tool
	// calls only those (every call keeps its Name; a call sent without
	// arguments, such as one of a tool no such value lists, gets nil
	// Args), and none when the task sets no such key. Arguments are most of a derived turn's bytes, so a scorer
	// that checks a few keys of a few tools declares this. Hosts before
	// SDK 1.4 ignore it and send every argument, which such a scorer does
	// not read: declaring it is always safe. In process a scorer may be
	// given every argument. docs/protocol.md ("Needs").
	ArgsRead bool `json:"args_read,omitempty"`
}

// Description is what a scorer says about itself. It is constant.
type Description struct {
	ID         ID     `json:"id"`
	Version    string `json:"version"`
	SDKVersion string `json:"sdk_version,omitempty"` // filled in by the SDK
	Protocols  []int  `json:"protocols,omitempty"`   // filled in by the SDK
	KPIs       []KPI  `json:"kpis"`
	Needs      []Need `json:"needs"`
}

// Declares reports whether the description declares KPI key k.
func (d Description) Declares(k string) bool {
	for _, kpi := range d.KPIs {
		if kpi.Key == k {
			return true
		}
	}
	return false
}

// NeedsPart reports whether the description declares need n.
func (d Description) NeedsPart(n Need) bool {
	for _, x := range d.Needs {
		if x == n {
			return true
		}
	}
	return false
}

// Safety is a task's safety block.
type Safety struct {
	RequiresHuman bool `json:"requires_human"`
	MaxToolCalls  *int `json:"max_tool_calls,omitempty"`
}

// Task is the pack task a case belongs to, as a scorer sees it.
type Task struct {
	Label       string                     `json:"label"`
	Persona     string                     `json:"persona"`
	Prompt      string                     `json:"prompt,omitempty"`
	KPIs        map[string]json.RawMessage `json:"kpis"`
	Safety      Safety                     `json:"safety"`
	ToolCatalog []string                   `json:"tool_catalog,omitempty"` // the pack's and the task's tool_catalog, merged
	SliceTags   []string                   `json:"slice_tags,omitempty"`
}

// KPI decodes the value of KPI key k into v. It reports false when the task
// does not set k.
func (t *Task) KPI(k string, v any) (bool, error) {
	raw, ok := t.KPIs[k]
	if !ok {
		return false, nil
	}
	return true, json.Unmarshal(raw, v)
}

// Upstream is the result another scorer gave the same case (for composite).
type Upstream struct {
	Scorer ID     `json:"scorer"`
	Result Result `json:"result"`
}

// Case is one turn to score. Parts the scorer did not declare in Needs are
// left empty by the host. Cases of one batch that share a snapshot share the
// same *Snapshot, so a scorer may index it once (sdk.SnapshotCache); a
// plugin also gives later batches with the same snapshot, or the same task,
// the values it decoded before. Snapshots and tasks are shared: read them,
// never change them.
type Case struct {
	ID          string     `json:"id"` // unique within a batch
	Task        Task       `json:"task"`
	Turn        Turn       `json:"turn"`
	StartedAt   time.Time  `json:"started_at,omitzero"`
	FinishedAt  time.Time  `json:"finished_at,omitzero"`
	StateBefore *Snapshot  `json:"state_before,omitempty"`
	StateAfter  *Snapshot  `json:"state_after,omitempty"`
	Upstream    []Upstream `json:"upstream,omitempty"`
}

// Check is one KPI check and how it went.
type Check struct {
	KPI        string   `json:"kpi"`
	Score      float64  `json:"score"` // in [0,1]
	Passed     bool     `json:"passed"`
	Detail     string   `json:"detail"`
	Evidence   []string `json:"evidence,omitempty"`
	FailureTag string   `json:"failure_tag,omitempty"` // set when the check failed and has a tag
}

// Result is a scorer's answer for one case. Problems with the input (a KPI
// value the scorer cannot use, a missing snapshot) are Diagnostics; a scorer
// that cannot score at all returns an error instead.
type Result struct {
	Score       float64  `json:"score"` // in [0,1]
	Checks      []Check  `json:"checks"`
	FailureTags []string `json:"failure_tags,omitempty"`
	Diagnostics []string `json:"diagnostics,omitempty"`
}
