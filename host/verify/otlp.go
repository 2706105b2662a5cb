package verify

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/assay-eval/assay/pkg/diag"
)

// Diagnostic codes for OTLP input (docs/otel.md).
const (
	codeOTLPSyntax    = "otlp.syntax"
	codeOTLPNoLabel   = "otlp.no_label"
	codeOTLPNoContent = "otlp.no_content"
	codeOTLPDupLabel  = "otlp.duplicate_label"
)

// Attribute names read from spans and resources (docs/otel.md).
const (
	// DefaultLabelAttr is the attribute that names a trace's pack task.
	DefaultLabelAttr = "assay.task.label"
	attrCandidate    = "assay.candidate"
	attrCost         = "assay.cost_usd"
	attrOperation    = "gen_ai.operation.name"
	attrToolName     = "gen_ai.tool.name"
	attrToolArgs     = "gen_ai.tool.call.arguments"
	attrToolResult   = "gen_ai.tool.call.result"
	attrOutput       = "gen_ai.output.messages"
	attrInput        = "gen_ai.input.messages"
	attrSystem       = "gen_ai.system_instructions"
	attrErrorType    = "error.type"
	opInvokeAgent    = "invoke_agent"
	opExecuteTool    = "execute_tool"
	// The older span events that carry the model's reply.
	eventChoice     = "gen_ai.choice"
	eventCompletion = "gen_ai.content.completion"
)

// OTLPOptions say how OTLP traces become turns.
type OTLPOptions struct {
	// Candidate is the candidate of a trace whose resource has no
	// assay.candidate; empty means the file's base name.
	Candidate string
	// LabelAttr is the span or resource attribute holding the task label;
	// empty means DefaultLabelAttr.
	LabelAttr string
}

// ReadOTLPFile reads an OTLP/JSON file-exporter file (one
// ExportTraceServiceRequest, the same JSON as TracesData, a line) and maps
// each trace to a turn (docs/otel.md). Turns are grouped by candidate.
// A line that is not OTLP/JSON is an error at its line; a trace without a
// task label, or whose spans carry no content, is a warning naming the
// trace. Only what a turn needs is kept of each span; the turn's trace is
// written out as NDJSON when the turn is scored.
func ReadOTLPFile(path string, opts OTLPOptions) ([]*Input, diag.List, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading OTLP file: %w", err)
	}
	defer f.Close()
	if opts.Candidate == "" {
		opts.Candidate = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return ReadOTLP(f, path, opts)
}

// ReadOTLP is ReadOTLPFile on a stream (an OTLP/HTTP JSON body, say) named
// path in diagnostics; a trace naming no candidate is opts.Candidate.
func ReadOTLP(r io.Reader, path string, opts OTLPOptions) ([]*Input, diag.List, error) {
	if opts.LabelAttr == "" {
		opts.LabelAttr = DefaultLabelAttr
	}
	rd := &otlpReader{path: path, opts: opts, traces: map[string]*otlpTrace{}}
	done := make(chan struct{})
	defer close(done)
	for res := range decodeLines(bufio.NewReaderSize(r, 64<<10), path, runtime.GOMAXPROCS(0), done) {
		d := <-res
		switch {
		case d.err != nil:
			return nil, nil, fmt.Errorf("reading OTLP file %s: %w", path, d.err)
		case d.diag != nil:
			rd.diags = append(rd.diags, *d.diag)
		case d.td != nil:
			rd.add(d.td, d.lineNo)
		}
	}
	inputs := rd.inputs()
	return inputs, rd.diags, nil
}

// decodedLine is one line of an OTLP file: its export request, or why it
// is not one, or the error that stopped reading.
type decodedLine struct {
	lineNo int
	td     *tracepb.TracesData
	diag   *diag.Diagnostic
	err    error
}

// decodeLines reads r's lines and decodes them on workers (protojson is
// most of the cost of reading OTLP), delivering them in file order: each
// channel received yields its line. Closing done stops it.
func decodeLines(r *bufio.Reader, path string, workers int, done <-chan struct{}) <-chan chan decodedLine {
	order := make(chan chan decodedLine, 2*workers)
	jobs := make(chan func(), workers)
	for range workers {
		go func() {
			for j := range jobs {
				j()
			}
		}()
	}
	go func() {
		defer close(order)
		defer close(jobs)
		un := protojson.UnmarshalOptions{DiscardUnknown: true}
		for lineNo := 1; ; lineNo++ {
			line, _, err := readLine(r, maxTurnLine)
			if errors.Is(err, io.EOF) && len(line) == 0 {
				return
			}
			res := make(chan decodedLine, 1) // never blocks a worker
			select {
			case order <- res:
			case <-done:
				return
			}
			pos := diag.Pos{File: path, Line: lineNo, Col: 1}
			switch {
			case errors.Is(err, errLineTooLong):
				d := diag.Errorf(pos, codeOTLPSyntax, "line longer than %d MiB", maxTurnLine>>20)
				res <- decodedLine{lineNo: lineNo, diag: &d}
				continue
			case err != nil && !errors.Is(err, io.EOF):
				res <- decodedLine{lineNo: lineNo, err: err}
				return
			case len(bytes.TrimSpace(line)) == 0:
				res <- decodedLine{lineNo: lineNo}
			default:
				job := func() {
					td := &tracepb.TracesData{}
					if uerr := un.Unmarshal(line, td); uerr != nil {
						d := diag.Errorf(pos, codeOTLPSyntax, "not an OTLP/JSON ExportTraceServiceRequest: %v", uerr)
						res <- decodedLine{lineNo: lineNo, diag: &d}
						return
					}
					res <- decodedLine{lineNo: lineNo, td: td}
				}
				select {
				case jobs <- job:
				case <-done:
					return
				}
			}
			if errors.Is(err, io.EOF) {
				return
			}
		}
	}()
	return order
}

// otlpReader groups the spans of an OTLP file by trace.
type otlpReader struct {
	path   string
	opts   OTLPOptions
	traces map[string]*otlpTrace
	order  []string // trace IDs in the order first seen
	diags  diag.List
}

// otlpTrace is what one trace contributes to its turn.
type otlpTrace struct {
	id        string
	line      int // the line of its first span
	label     string
	labelRank int // where label came from: 1 a resource, 2 a span, 3 the root span
	candidate string
	cost      *float64
	root      *otlpRoot
	events    []otlpEvent
	content   bool // some span carried message or argument content
	seq       int
}

// otlpRoot is the trace's root span (a span without a parent).
type otlpRoot struct {
	start, end uint64
	answer     string
	finish     string
	hasAnswer  bool
}

// otlpEvent is one trace line to be: a tool call, a sub-agent or an error,
// ordered by its span's start time.
type otlpEvent struct {
	at   uint64
	seq  int
	kind string // "tool", "sub_agent" or "error"
	name string // tool name, or the error message
	args json.RawMessage
}

// spanID is an OTLP/JSON trace or span ID as the file spells it. OTLP/JSON
// writes IDs in hex, which protojson reads as base64; encoding the bytes
// back as base64 gives the hex text again, and IDs stay distinct.
func spanID(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func (rd *otlpReader) add(td *tracepb.TracesData, lineNo int) {
	for _, rs := range td.GetResourceSpans() {
		res := rs.GetResource().GetAttributes()
		resLabel, resCand := stringAttr(res, rd.opts.LabelAttr), stringAttr(res, attrCandidate)
		resCost, hasResCost := doubleAttr(res, attrCost)
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				t := rd.trace(spanID(sp.GetTraceId()), lineNo)
				t.candidate = cmp.Or(t.candidate, resCand, stringAttr(sp.GetAttributes(), attrCandidate))
				t.setLabel(stringAttr(sp.GetAttributes(), rd.opts.LabelAttr), resLabel, len(sp.GetParentSpanId()) == 0)
				if hasResCost && t.cost == nil {
					t.cost = &resCost
				}
				t.addSpan(sp)
			}
		}
	}
}

// setLabel keeps the best-placed task label: the root span's, else any
// span's, else a resource's.
func (t *otlpTrace) setLabel(spanLabel, resLabel string, isRoot bool) {
	rank, l := 0, ""
	switch {
	case spanLabel != "" && isRoot:
		rank, l = 3, spanLabel
	case spanLabel != "":
		rank, l = 2, spanLabel
	case resLabel != "":
		rank, l = 1, resLabel
	}
	if rank > t.labelRank {
		t.label, t.labelRank = l, rank
	}
}

func (rd *otlpReader) trace(id string, lineNo int) *otlpTrace {
	t := rd.traces[id]
	if t == nil {
		t = &otlpTrace{id: id, line: lineNo}
		rd.traces[id] = t
		rd.order = append(rd.order, id)
	}
	return t
}

// inputs turns every trace into a turn of its candidate, in the order the
// traces first appear.
func (rd *otlpReader) inputs() []*Input {
	var inputs []*Input
	index := map[string]*Input{}
	seen := map[[2]string]*otlpTrace{}
	for _, id := range rd.order {
		t := rd.traces[id]
		delete(rd.traces, id)
		pos := diag.Pos{File: rd.path, Line: t.line, Col: 1}
		if t.label == "" {
			rd.diags = append(rd.diags, diag.Warnf(pos, codeOTLPNoLabel,
				"trace %s has no %s attribute on a span or its resource; ignored", t.id, rd.opts.LabelAttr))
			continue
		}
		ts := t.turn(rd.path, cmp.Or(t.candidate, rd.opts.Candidate))
		key := [2]string{ts.Candidate, ts.Label}
		if first, dup := seen[key]; dup {
			rd.diags = append(rd.diags, diag.Errorf(pos, codeOTLPDupLabel,
				"candidate %q already has a turn for %q (trace %s, line %d); trace %s is another", ts.Candidate, ts.Label, first.id, first.line, t.id))
			continue
		}
		seen[key] = t
		if !t.content {
			rd.diags = append(rd.diags, diag.Warnf(pos, codeOTLPNoContent,
				"trace %s (%s, task %s): no span carries message or tool-argument content, so the turn has no answer and its tool calls no arguments; "+
					"turn on content capture in the instrumentation (docs/otel.md)", t.id, ts.Candidate, ts.Label))
		}
		in := index[ts.Candidate]
		if in == nil {
			in = &Input{Candidate: ts.Candidate}
			index[ts.Candidate] = in
			inputs = append(inputs, in)
		}
		in.Turns = append(in.Turns, *ts)
	}
	return inputs
}

// turn is the trace's TurnSpec: latency and times from the root span.
func (t *otlpTrace) turn(file, candidate string) *TurnSpec {
	sort.SliceStable(t.events, func(i, j int) bool {
		if t.events[i].at != t.events[j].at {
			return t.events[i].at < t.events[j].at
		}
		return t.events[i].seq < t.events[j].seq
	})
	ts := &TurnSpec{Candidate: candidate, Label: t.label, CostUSD: t.cost,
		Pos: diag.Pos{File: file, Line: t.line, Col: 1}, inline: &otlpTurn{events: t.events, root: t.root}}
	if r := t.root; r != nil && r.end >= r.start && r.start > 0 {
		lat := float64(r.end-r.start) / 1e9
		ts.LatencyS = &lat
		ts.StartedAt = time.Unix(0, int64(r.start)).UTC()
		ts.FinishedAt = time.Unix(0, int64(r.end)).UTC()
	}
	return ts
}

// anyValue is an attribute value as plain Go (JSON-encodable) data.
func anyValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BytesValue:
		return x.BytesValue
	case *commonpb.AnyValue_ArrayValue:
		out := make([]any, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, anyValue(e))
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		out := make(map[string]any, len(x.KvlistValue.GetValues()))
		for _, kv := range x.KvlistValue.GetValues() {
			out[kv.GetKey()] = anyValue(kv.GetValue())
		}
		return out
	}
	return nil
}

func attr(kvs []*commonpb.KeyValue, key string) *commonpb.AnyValue {
	for _, kv := range kvs {
		if kv.GetKey() == key {
			return kv.GetValue()
		}
	}
	return nil
}

func stringAttr(kvs []*commonpb.KeyValue, key string) string {
	return attr(kvs, key).GetStringValue()
}

// doubleAttr reads a number attribute (double or int).
func doubleAttr(kvs []*commonpb.KeyValue, key string) (float64, bool) {
	switch x := attr(kvs, key).GetValue().(type) {
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue, true
	case *commonpb.AnyValue_IntValue:
		return float64(x.IntValue), true
	}
	return 0, false
}
