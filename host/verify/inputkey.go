package verify

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/pkg/scorer"
)

// inputKeyVersion changes whenever what goes into an input key changes, so
// a key never matches one computed by other rules.
const inputKeyVersion = 1

// taskDef is the part of the pack a task's turns are scored by: the task as
// its scorer sees it, its scorer, weight and CEL checks, the pack-level
// scoring rules that act on a single turn, and the scorers that score it
// (the task's scorer and its upstream scorers) with their digests.
type taskDef struct {
	Version int          `json:"v"`
	Task    scorer.Task  `json:"task"`
	Scorer  scorer.ID    `json:"scorer"`
	Weight  float64      `json:"weight"`
	CEL     []celDef     `json:"cel"`
	Scoring turnScoring  `json:"scoring"`
	Scorers []scorerStub `json:"scorers"`
}

type celDef struct {
	Name        string  `json:"name"`
	Expr        string  `json:"expr"`
	Message     string  `json:"message"`
	MessageExpr string  `json:"message_expr"`
	Weight      float64 `json:"weight"`
	FailureTag  string  `json:"failure_tag"`
}

// turnScoring is what of the pack's scoring block acts on one turn: the
// weights of its score and the budgets of its tags.
type turnScoring struct {
	ProcessWeight   float64  `json:"process_weight"`
	KPIWeight       float64  `json:"kpi_weight"`
	MaxMeanLatencyS *float64 `json:"max_mean_latency_s"`
	MaxMeanCostUSD  *float64 `json:"max_mean_cost_usd"`
}

type scorerStub struct {
	ID      scorer.ID `json:"id"`
	Version string    `json:"version"`
	SHA256  string    `json:"sha256"`
}

// taskKey is the sha256 of the canonical JSON of t's definition (taskDef):
// json.Marshal's bytes, written by appendTaskDef with a KPI map tasks share
// encoded once (docs/performance.md, "Verifying many small turns"). A
// definition appendTaskDef does not write (a NaN or infinite number) is
// left to json.Marshal, which reports it.
// New gives every task the same keyer.
func (e *Engine) taskKey(k *taskKeyer, t *pack.Task, wire scorer.Task) ([sha256.Size]byte, error) {
	d := taskDef{Version: inputKeyVersion, Task: wire, Scorer: t.Scorer, Weight: t.Weight, CEL: []celDef{},
		Scoring: turnScoring{
			ProcessWeight:   e.cfg.Pack.Scoring.ProcessWeight,
			KPIWeight:       e.cfg.Pack.Scoring.KPIWeight,
			MaxMeanLatencyS: e.cfg.Pack.Scoring.MaxMeanLatencyS,
			MaxMeanCostUSD:  e.cfg.Pack.Scoring.MaxMeanCostUSD,
		}}
	if len(t.CEL) > 0 {
		d.CEL = k.cel[:0] // the keyer's, reused task after task
	}
	for _, c := range t.CEL {
		d.CEL = append(d.CEL, celDef{Name: c.Name, Expr: c.Expr, Message: c.Message, MessageExpr: c.MessageExpr,
			Weight: c.Weight, FailureTag: c.FailureTag})
	}
	ref := e.cfg.Identities[t.Scorer]
	d.Scorers = append(k.scorers[:0], scorerStub{ID: t.Scorer, Version: ref.Version, SHA256: ref.SHA256})
	for _, id := range e.upstreams[t.Label] {
		ref := e.cfg.Identities[id]
		d.Scorers = append(d.Scorers, scorerStub{ID: id, Version: ref.Version, SHA256: ref.SHA256})
	}
	if len(t.CEL) > 0 {
		k.cel = d.CEL
	}
	k.scorers = d.Scorers
	if b, ok := k.appendTaskDef(k.buf[:0], &d); ok {
		k.buf = b
		return sha256.Sum256(b), nil
	}
	b, err := json.Marshal(d)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("task %q: computing its input key: %w", t.Label, err)
	}
	return sha256.Sum256(b), nil
}

// taskKeyer writes taskDefs as json.Marshal does, keeping a KPI map encoded
// by its identity (the engine's tasks with equal KPIs share one, see
// wireShare). Its buffers are reused from one task to the next: one keyer,
// one goroutine.
type taskKeyer struct {
	buf     []byte
	cel     []celDef
	scorers []scorerStub
	kpis    map[uintptr][]byte
}

// appendTaskDef appends json.Marshal(*d) to b. It reports false, and b is
// to be dropped, when d holds a number json.Marshal refuses (NaN, ±Inf).
func (k *taskKeyer) appendTaskDef(b []byte, d *taskDef) ([]byte, bool) {
	ok := true
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(d.Version), 10)
	b = append(b, `,"task":{"label":`...)
	w := &d.Task
	b = appendJSONString(b, w.Label)
	b = append(b, `,"persona":`...)
	b = appendJSONString(b, w.Persona)
	if w.Prompt != "" {
		b = append(b, `,"prompt":`...)
		b = appendJSONString(b, w.Prompt)
	}
	b = append(b, `,"kpis":`...)
	kpis, err := k.kpiJSON(w.KPIs)
	if err != nil {
		return b, false
	}
	b = append(b, kpis...)
	b = append(b, `,"safety":{"requires_human":`...)
	b = strconv.AppendBool(b, w.Safety.RequiresHuman)
	if w.Safety.MaxToolCalls != nil {
		b = append(b, `,"max_tool_calls":`...)
		b = strconv.AppendInt(b, int64(*w.Safety.MaxToolCalls), 10)
	}
	b = append(b, '}')
	if len(w.ToolCatalog) > 0 {
		b = append(b, `,"tool_catalog":`...)
		b = appendJSONStrings(b, w.ToolCatalog)
	}
	if len(w.SliceTags) > 0 {
		b = append(b, `,"slice_tags":`...)
		b = appendJSONStrings(b, w.SliceTags)
	}
	b = append(b, `},"scorer":`...)
	b = appendJSONString(b, string(d.Scorer))
	b = append(b, `,"weight":`...)
	b, ok = appendJSONFloat(b, d.Weight, ok)
	b = append(b, `,"cel":`...)
	b, ok = appendJSONList(b, d.CEL, ok, appendCELDef)
	b = append(b, `,"scoring":{"process_weight":`...)
	b, ok = appendJSONFloat(b, d.Scoring.ProcessWeight, ok)
	b = append(b, `,"kpi_weight":`...)
	b, ok = appendJSONFloat(b, d.Scoring.KPIWeight, ok)
	b = append(b, `,"max_mean_latency_s":`...)
	b, ok = appendJSONFloatPtr(b, d.Scoring.MaxMeanLatencyS, ok)
	b = append(b, `,"max_mean_cost_usd":`...)
	b, ok = appendJSONFloatPtr(b, d.Scoring.MaxMeanCostUSD, ok)
	b = append(b, '}')
	b = append(b, `,"scorers":`...)
	b, ok = appendJSONList(b, d.Scorers, ok, appendScorerStub)
	return append(b, '}'), ok
}

func appendCELDef(b []byte, c *celDef, ok bool) ([]byte, bool) {
	b = append(b, `{"name":`...)
	b = appendJSONString(b, c.Name)
	b = append(b, `,"expr":`...)
	b = appendJSONString(b, c.Expr)
	b = append(b, `,"message":`...)
	b = appendJSONString(b, c.Message)
	b = append(b, `,"message_expr":`...)
	b = appendJSONString(b, c.MessageExpr)
	b = append(b, `,"weight":`...)
	b, ok = appendJSONFloat(b, c.Weight, ok)
	b = append(b, `,"failure_tag":`...)
	b = appendJSONString(b, c.FailureTag)
	return append(b, '}'), ok
}

func appendScorerStub(b []byte, s *scorerStub, ok bool) ([]byte, bool) {
	return appendScorerRef(b, string(s.ID), s.Version, s.SHA256), ok
}

// kpiJSON is json.Marshal(m), encoded once for each map.
func (k *taskKeyer) kpiJSON(m map[string]json.RawMessage) ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	id := reflect.ValueOf(m).Pointer()
	if b, ok := k.kpis[id]; ok {
		return b, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if k.kpis == nil {
		k.kpis = map[uintptr][]byte{}
	}
	k.kpis[id] = b
	return b, nil
}

// turnInput is everything one turn's result depends on, by digest: the
// task's definition, the trace and snapshot bytes, and the turn's metrics
// row (results.json entry or turns line).
type turnInput struct {
	Version int         `json:"v"`
	Task    string      `json:"task_sha256"`
	Trace   string      `json:"trace_sha256"`
	Before  string      `json:"state_before_sha256"`
	After   string      `json:"state_after_sha256"`
	Metrics turnMetrics `json:"metrics"`
}

type turnMetrics struct {
	Candidate  string    `json:"candidate"`
	Label      string    `json:"label"`
	Persona    string    `json:"persona"`
	LatencyS   *float64  `json:"latency_s"`
	CostUSD    *float64  `json:"cost_usd"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
}

// inputKey is the sha256 of one turn's inputs (turnInput): a recorded turn
// is reused only when its key is the same (docs/verify-engine.md).
func (e *Engine) inputKey(info *taskInfo, ts *TurnSpec, traceSHA, beforeSHA, afterSHA string) string {
	in := turnInput{Version: inputKeyVersion, Task: hexString(info.key[:]), Trace: traceSHA, Before: beforeSHA, After: afterSHA,
		Metrics: turnMetrics{Candidate: ts.Candidate, Label: ts.Label, Persona: ts.Persona, LatencyS: ts.LatencyS,
			CostUSD: ts.CostUSD, StartedAt: ts.StartedAt, FinishedAt: ts.FinishedAt}}
	b, err := json.Marshal(in)
	if err != nil {
		// Only a NaN or infinite metric fails to encode; such a turn is
		// never reused.
		return ""
	}
	return sha256Hex(b)
}

// turnKey is inputKey for a turn whose metrics row (metricsRow) is
// metrics: the same bytes hashed, the row encoded once for both.
func (e *Engine) turnKey(info *taskInfo, ts *TurnSpec, traceSHA, beforeSHA, afterSHA string, metrics []byte) string {
	if metrics == nil {
		return "" // a NaN or infinite metric, which inputKey cannot encode either
	}
	if !isHex(traceSHA) || !isHex(beforeSHA) || !isHex(afterSHA) {
		return e.inputKey(info, ts, traceSHA, beforeSHA, afterSHA)
	}
	b := make([]byte, 0, 300+len(metrics))
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, inputKeyVersion, 10)
	b = append(b, `,"task_sha256":"`...)
	b = hex.AppendEncode(b, info.key[:])
	b = append(b, '"')
	for _, f := range [...]struct{ key, sha string }{{"trace_sha256", traceSHA},
		{"state_before_sha256", beforeSHA}, {"state_after_sha256", afterSHA}} {
		b = append(b, `,"`...)
		b = append(b, f.key...)
		b = append(b, `":"`...)
		b = append(b, f.sha...)
		b = append(b, '"')
	}
	b = append(b, `,"metrics":`...)
	b = append(b, metrics...)
	b = append(b, '}')
	return sha256Hex(b)
}

// isHex reports whether s is lowercase hex (or empty): a string JSON
// encodes as it is.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
