package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/assay-eval/assay/pkg/diag"

	"github.com/assay-eval/assay/sdk/scorerpb"
)

// MaxLineBytes is the longest trace line Parse reads. A longer line is
// skipped with a warning; it never fails the parse and is never held whole.
const MaxLineBytes = 16 << 20

// MaxDiagnostics caps the warnings Parse returns; the rest are counted in
// one last CodeTruncated warning.
const MaxDiagnostics = 100

// Limits of what Parse keeps of one turn (docs/run-input.md, "Limits"). A
// trace over any of them is not scored: Parse keeps counting (events, tool
// calls, bytes) without keeping more, and returns a CodeTooLarge error
// saying which limit was passed, where, and by how much. Memory stays
// proportional to what is kept, never to what is read.
const (
	MaxEvents    = 250_000  // events (non-blank lines) per turn
	MaxToolCalls = 10_000   // tool calls (tool_start events) per turn
	MaxKeptBytes = 64 << 20 // bytes of text kept: streamed text, error messages, phases, names, tool arguments
)

// rawTextMax bounds the text a "raw" event keeps of a line that is not JSON.
const rawTextMax = 256

// Diagnostic codes the parser emits (all warnings).
const (
	CodeMalformedLine = "trace.malformed_line" // a line that is not a JSON object
	CodeLineTooLong   = "trace.line_too_long"  // a line over MaxLineBytes
	CodeFieldType     = "trace.field_type"     // a known field with a value of the wrong type
	CodeTruncated     = "diag.truncated"       // more warnings than MaxDiagnostics
	CodeTooLarge      = "trace.too_large"      // an error: the trace passes MaxEvents, MaxToolCalls or MaxKeptBytes
)

// Event types (docs/trace.md).
const (
	TypeError           = "error"
	TypePhase           = "phase"
	TypeRuntime         = "runtime"
	TypeRuntimeRaw      = "runtime_raw"
	TypeSubAgentSpawned = "sub_agent_spawned"
	TypeStreamEvent     = "stream_event"
	TypeDone            = "done"
	TypeFinalAnswer     = "final_answer"
	TypeRaw             = "raw"

	EventToolStart     = "tool_start"
	EventToolEnd       = "tool_end"
	EventLoopIteration = "loop_iteration"

	// FinalizeTool is the tool whose runtime event marks a turn finalized.
	FinalizeTool = "finalize_response"
)

// fields holds the spans of the members of a trace line the parser reads.
// Everything else is validated and skipped by the scanner without building
// values (no map[string]any per line), which keeps Parse fast.
type fields struct {
	typ, message, phase, payload, event, reply, finalized, taskID, taskAction span
}

func (f *fields) visit(key []byte, v span) {
	switch string(key) { // no allocation: the compiler special-cases this switch
	case "type":
		f.typ = v
	case "message":
		f.message = v
	case "phase":
		f.phase = v
	case "payload":
		f.payload = v
	case "event":
		f.event = v
	case "reply":
		f.reply = v
	case "finalized":
		f.finalized = v
	case "task_id":
		f.taskID = v
	case "task_action":
		f.taskAction = v
	}
}

// payloadFields are the members of a runtime or final_answer payload.
type payloadFields struct {
	eventType, toolName, toolInput, args, message span
}

func (f *payloadFields) visit(key []byte, v span) {
	switch string(key) {
	case "event_type":
		f.eventType = v
	case "tool_name":
		f.toolName = v
	case "tool_input":
		f.toolInput = v
	case "args":
		f.args = v
	case "message":
		f.message = v
	}
}

// streamFields are the members of a stream_event's event and of its delta.
type streamFields struct {
	typ, delta, text span
}

func (f *streamFields) visit(key []byte, v span) {
	switch string(key) {
	case "type":
		f.typ = v
	case "delta":
		f.delta = v
	case "text":
		f.text = v
	}
}

// level names the object the scanner is in, for lineFields.
type level uint8

const (
	levelSkip    level = iota // validated, nothing recorded
	levelLine                 // a trace line: fields
	levelPayload              // a runtime or final_answer payload
	levelEvent                // a stream_event's event
	levelDelta                // the event's delta
)

// lineFields holds the spans of every member a trace line's parse reads, at
// each level, found by the one scan that validates the line. A nested
// level holds the members of the last object value of its name, as
// encoding/json keeps the last of repeated members; it is read only when
// that last value is an object.
type lineFields struct {
	fields
	payload      payloadFields
	event, delta streamFields
}

// nested is the level of an object value under key at level l, levelSkip
// when the parser reads nothing in it; what an earlier value of the same
// name left is cleared.
func (f *lineFields) nested(l level, key []byte) level {
	switch {
	case l == levelLine && string(key) == "payload":
		f.payload = payloadFields{}
		return levelPayload
	case l == levelLine && string(key) == "event":
		f.event, f.delta = streamFields{}, streamFields{}
		return levelEvent
	case l == levelEvent && string(key) == "delta":
		f.delta = streamFields{}
		return levelDelta
	}
	return levelSkip
}

// set records member key's value span v of an object at level l.
func (f *lineFields) set(l level, key []byte, v span) {
	switch l {
	case levelLine:
		f.fields.visit(key, v)
	case levelPayload:
		f.payload.visit(key, v)
	case levelEvent:
		f.event.visit(key, v)
	case levelDelta:
		f.delta.visit(key, v)
	}
}

// ParseFile parses the NDJSON trace at path (see Parse). Only a regular
// file is read: a FIFO or a device is refused without blocking.
func ParseFile(path string) (*Turn, diag.List, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("opening trace: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("opening trace: %s is not a regular file (%s)", path, st.Mode().Type())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("opening trace: %w", err)
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !os.SameFile(st, fst) {
		return nil, nil, fmt.Errorf("opening trace: %s changed while it was opened", path)
	}
	return Parse(path, f)
}

// Parse reads an NDJSON trace line by line and derives the turn it
// describes (docs/trace.md). file names the trace in diagnostics.
//
// Parse never fails on content: a line that is not a JSON object becomes a
// "raw" event and a warning, a line longer than MaxLineBytes is skipped with
// a warning, a known field of the wrong type is ignored with a warning, and
// blank lines are skipped. A trace over a limit (MaxEvents, MaxToolCalls,
// MaxKeptBytes) is the one content error: the Turn is returned with what
// was kept, and a CodeTooLarge error diagnostic says the turn must not be
// scored. The error is for I/O errors only.
func Parse(file string, r io.Reader) (*Turn, diag.List, error) {
	return parse(file, r, MaxLineBytes, limits{events: MaxEvents, toolCalls: MaxToolCalls, bytes: MaxKeptBytes})
}

// limits are what parse keeps of a turn at most.
type limits struct {
	events, toolCalls, bytes int
}

// buffers are what one Parse reads with: the 64 KiB line reader and the
// buffer the streamed text is gathered in before it becomes a string.
type buffers struct {
	br   *bufio.Reader
	text []byte
	args scorerpb.ArgsParser // tool calls' keys and short values, shared across the traces it parses
}

// readers recycles the buffers of Parse: a run parses thousands of traces,
// and fresh buffers each time cost more than parsing a small one.
var readers = sync.Pool{New: func() any { return &buffers{br: bufio.NewReaderSize(nil, 64<<10)} }}

// maxPooledText is the largest streamed-text buffer kept for the next Parse.
const maxPooledText = 1 << 20

// smallTrace is the most events a trace has for Parse to copy them into a
// slice of their length, not the capacity they were read into.
const smallTrace = 8

// maxEventsHint bounds the capacity Parse gives a trace's events from the
// lines it has read ahead; a longer trace grows them as it goes.
const maxEventsHint = 1024

// parse is Parse with the limits as parameters, for tests.
func parse(file string, r io.Reader, maxLine int, lim limits) (*Turn, diag.List, error) {
	p := parser{
		file: file,
		lim:  lim,
		turn: &Turn{
			Events:        make([]Event, 0, smallTrace), // grown as needed: most of a short trace's cost was a capacity of 64, then 16
			ToolCalls:     []ToolCall{},
			ErrorMessages: []string{},
			Phases:        []string{},
		},
	}
	bufs := readers.Get().(*buffers)
	br := bufs.br
	br.Reset(r)
	p.deltas = bufs.text[:0]
	p.args = &bufs.args
	defer func() {
		br.Reset(nil)
		if cap(p.deltas) <= maxPooledText {
			bufs.text = p.deltas[:0]
		}
		readers.Put(bufs)
	}()
	var (
		long     []byte // accumulates a line longer than the reader's buffer
		tooLong  bool   // the current line passed MaxLineBytes and is being skipped
		n        int    // line number
		size     int    // bytes of the current line read so far
		prevLast byte   // the last byte of the previous chunk of a long line
	)
	for {
		chunk, err := br.ReadSlice('\n')
		if n == 0 && size == 0 {
			p.sizeEvents(br)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			size += len(chunk)
			prevLast = chunk[len(chunk)-1]
			if !tooLong {
				if size > maxLine {
					tooLong, long = true, nil
				} else {
					long = append(long, chunk...)
				}
			}
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("reading trace %s: %w", file, err)
		}
		if len(chunk) > 0 || size > 0 {
			n++
			size += len(chunk)
			if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
				size-- // the limit is on the line's content, without "\n" or "\r\n"
				if (len(chunk) > 1 && chunk[len(chunk)-2] == '\r') || (len(chunk) == 1 && prevLast == '\r') {
					size--
				}
			}
			switch {
			case tooLong || size > maxLine:
				p.warn(diag.Warnf(diag.Pos{File: file, Line: n}, CodeLineTooLong,
					"line of %d bytes is longer than the %d-byte limit; skipped", size, maxLine))
			case len(long) > 0:
				long = append(long, chunk...)
				p.line(n, long)
			default:
				p.line(n, chunk)
			}
			long, tooLong, size, prevLast = long[:0], false, 0, 0
			if cap(long) > 1<<20 {
				long = nil // do not hold a huge buffer for the rest of the trace
			}
		}
		if err != nil {
			break
		}
	}
	p.finish()
	if n := len(p.turn.Events); n < cap(p.turn.Events) && n <= smallTrace {
		// A short trace keeps its events at their length: thousands of
		// turns are in flight while a run is scored (docs/performance.md).
		p.turn.Events = append(make([]Event, 0, n), p.turn.Events...)
	}
	if p.over != "" {
		p.diags = append(p.diags, p.tooLarge())
	}
	if p.dropped > 0 {
		last := p.diags[len(p.diags)-1].Pos
		p.diags = append(p.diags, diag.Warnf(diag.Pos{File: file, Line: last.Line}, CodeTruncated,
			"%d more warnings not shown", p.dropped))
	}
	return p.turn, p.diags, nil
}

// sizeEvents gives the turn's events, once the first line is read, the
// capacity of the lines the reader already holds (at most maxEventsHint),
// rather than growing them a doubling at a time. It reads nothing more.
func (p *parser) sizeEvents(br *bufio.Reader) {
	ahead, _ := br.Peek(br.Buffered())
	lines := 1 + bytes.Count(ahead, []byte{'\n'})
	if lines > cap(p.turn.Events) {
		p.turn.Events = make([]Event, 0, min(lines, maxEventsHint))
	}
}

// warn records a warning, keeping at most MaxDiagnostics: a trace of a
// million broken lines still parses, with a readable report.
func (p *parser) warn(d diag.Diagnostic) {
	if len(p.diags) >= MaxDiagnostics {
		p.dropped++
		return
	}
	p.diags = append(p.diags, d)
}

type parser struct {
	file string
	lim  limits
	turn *Turn

	// Counts of the whole trace, kept or not, and the first limit passed
	// ("" while none is): from then on nothing more is kept.
	events, toolCalls, bytes int
	over                     string
	overLine                 int
	names                    map[string]string // interned tool names
	diags                    diag.List
	dropped                  int // warnings not kept, past MaxDiagnostics
	f                        lineFields
	args                     *scorerpb.ArgsParser

	deltas      []byte
	reply       string // last non-empty done reply
	finalAnswer string // last non-empty final_answer string
	hasFinal    bool
	textLen     int
}

func (p *parser) pos(n, col int) diag.Pos { return diag.Pos{File: p.file, Line: n, Col: col} }

// line handles one line (with its line ending, if any).
func (p *parser) line(n int, b []byte) {
	end := len(b)
	for end > 0 && (b[end-1] == '\n' || b[end-1] == '\r') {
		end--
	}
	b = b[:end]
	lead := 0
	for lead < len(b) && (b[lead] == ' ' || b[lead] == '\t' || b[lead] == '\r' || b[lead] == '\n') {
		lead++
	}
	if lead == len(b) {
		return // blank
	}
	p.events++
	if p.over == "" && p.events > p.lim.events {
		p.pass("events", n)
	}
	if b[lead] != '{' {
		p.raw(n, b, colOf(b, lead), "not a JSON object")
		return
	}
	p.f.fields = fields{} // a nested level is cleared when its object is entered, and read only then (lineFields)
	sc := scanner{b: b, i: lead}
	err := sc.members(1, &p.f, levelLine)
	if err == nil {
		sc.ws()
		if sc.i < len(b) {
			err = sc.fail("invalid character %q after top-level value", b[sc.i])
		}
	}
	if err != nil {
		var se *syntaxError
		errors.As(err, &se)
		p.raw(n, b, colOf(b, se.off), "invalid JSON: "+se.msg)
		return
	}
	p.event(n, b, &p.f)
}

// raw records a line that is not a JSON object.
func (p *parser) raw(n int, b []byte, col int, why string) {
	text := b
	if len(text) > rawTextMax {
		text = text[:rawTextMax]
		for len(text) > 0 && !utf8.Valid(text) {
			text = text[:len(text)-1]
		}
	}
	if p.keep(n, len(text)) {
		p.turn.Events = append(p.turn.Events, Event{Line: n, Type: TypeRaw, Text: strings.ToValidUTF8(string(text), "\uFFFD")})
	}
	p.warn(diag.Warnf(p.pos(n, col), CodeMalformedLine, "%s; kept as a raw event", why))
}

// colOf converts a byte offset into b to a 1-based rune column.
func colOf(b []byte, off int) int {
	off = max(0, min(off, len(b)))
	return utf8.RuneCount(b[:off]) + 1
}

// str returns the string value v of line b; a value of another type is
// ignored with a warning naming the field.
func (p *parser) str(n int, b []byte, v span, field string) string {
	switch v.kind {
	case 0, 'n':
		return ""
	case '"':
		return stringValue(b, v)
	}
	p.mistyped(n, b, v, field, "a string")
	return ""
}

func (p *parser) mistyped(n int, b []byte, v span, field, want string) {
	p.warn(diag.Warnf(p.pos(n, colOf(b, v.start)), CodeFieldType,
		"field %s: want %s, got %s; ignored", field, want, kindName(v.kind)))
}

func kindName(k byte) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a bool"
	case 'n':
		return "null"
	}
	return "a number"
}

// object reports whether the value v of line b is an object, whose members
// the line's scan recorded in p.f; false when v is absent or null, and a
// warning when it is not an object.
func (p *parser) object(n int, b []byte, v span, field string) bool {
	switch v.kind {
	case 0, 'n':
		return false
	case '{':
		return true
	}
	p.mistyped(n, b, v, field, "an object")
	return false
}

func (p *parser) event(n int, b []byte, f *lineFields) {
	t := p.turn
	ev := Event{Line: n, Type: p.str(n, b, f.typ, "type")}
	switch ev.Type {
	case TypeError:
		t.Error = true
		if m := messageText(b, f.message); p.keep(n, len(m)) {
			t.ErrorMessages = append(t.ErrorMessages, m)
		}
	case TypePhase:
		ev.Phase = p.str(n, b, f.phase, "phase")
		if p.keep(n, len(ev.Phase)) {
			t.Phases = append(t.Phases, ev.Phase)
		}
	case TypeRuntime, TypeRuntimeRaw:
		p.runtime(n, b, f, &ev)
	case TypeSubAgentSpawned:
		t.ToolEvents++
		t.SubAgents++
	case TypeStreamEvent:
		e, d := &f.event, &f.delta
		if !p.object(n, b, f.fields.event, "event") || p.str(n, b, e.typ, "event.type") != "content_block_delta" {
			break
		}
		if !p.object(n, b, e.delta, "event.delta") || p.str(n, b, d.typ, "event.delta.type") != "text_delta" {
			break
		}
		switch d.text.kind {
		case '"':
			k := len(p.deltas)
			if raw := b[d.text.start+1 : d.text.end-1]; plainASCII(raw) {
				p.deltas = append(p.deltas, raw...) // as it is, a rune a byte: one pass
				p.textLen += len(raw)
			} else {
				p.deltas = appendStringValue(p.deltas, b, d.text)
				p.textLen += utf8.RuneCount(p.deltas[k:])
			}
			if !p.keep(n, len(p.deltas)-k) {
				p.deltas = p.deltas[:k] // counted, not kept
			}
		case 0, 'n':
		default:
			p.mistyped(n, b, d.text, "event.delta.text", "a string")
		}
	case TypeDone:
		if reply := p.str(n, b, f.reply, "reply"); reply != "" {
			p.reply = reply
			p.textLen += utf8.RuneCountInString(reply)
		}
		switch f.finalized.kind {
		case 't':
			t.Finalized = true
		case 0, 'f', 'n':
		default:
			p.mistyped(n, b, f.finalized, "finalized", "a bool")
		}
		switch f.taskID.kind {
		case 0, 'n':
		case '"':
			if id := stringValue(b, f.taskID); id != "" {
				t.TaskID = id
			}
		case '{', '[', 't', 'f':
			p.mistyped(n, b, f.taskID, "task_id", "a string or a number")
		default:
			t.TaskID = string(b[f.taskID.start:f.taskID.end])
		}
		if a := p.str(n, b, f.taskAction, "task_action"); a != "" {
			t.TaskAction = a
		}
	case TypeFinalAnswer:
		if p.object(n, b, f.fields.payload, "payload") {
			p.finalAnswerMessage(n, b, f.payload.message)
		}
	}
	ev.Type = knownType(ev.Type)
	if p.keep(n, len(ev.Phase)+len(ev.EventType)+len(ev.ToolName)) {
		t.Events = append(t.Events, ev)
	}
}

// runtime handles a runtime or runtime_raw event: tool calls, loop
// iterations and the finalize tool.
func (p *parser) runtime(n int, b []byte, f *lineFields, ev *Event) {
	t := p.turn
	pl := &f.payload
	if !p.object(n, b, f.fields.payload, "payload") {
		return
	}
	ev.EventType = p.str(n, b, pl.eventType, "payload.event_type")
	ev.ToolName = p.toolName(n, b, pl.toolName)
	switch ev.EventType {
	case EventToolStart:
		t.ToolEvents++
		ev.EventType = EventToolStart
		args := pl.toolInput
		if args.kind == 0 || args.kind == 'n' {
			args = pl.args
		}
		p.toolCalls++
		if p.over == "" && p.toolCalls > p.lim.toolCalls {
			p.pass("tool calls", n)
		}
		if p.keep(n, args.end-args.start) {
			t.ToolCalls = append(t.ToolCalls, ToolCall{Name: ev.ToolName, Args: p.decodeArgs(b, args)})
		}
	case EventToolEnd:
		t.ToolEvents++
		ev.EventType = EventToolEnd
	case EventLoopIteration:
		t.LoopIters++
		ev.EventType = EventLoopIteration
	}
	if ev.ToolName == FinalizeTool {
		t.Finalized = true
	}
}

// keep counts n bytes of text of line ln that the turn would keep and
// reports whether they are kept: no more is kept once a limit is passed.
func (p *parser) keep(ln, n int) bool {
	p.bytes += n
	if p.over == "" && p.bytes > p.lim.bytes {
		p.pass("bytes", ln)
	}
	return p.over == ""
}

// pass records the first limit passed, at line ln.
func (p *parser) pass(what string, ln int) {
	p.over, p.overLine = what, ln
}

// tooLarge is the error of a trace over a limit: which, by how much, and
// from which line nothing was kept.
func (p *parser) tooLarge() diag.Diagnostic {
	var what string
	switch p.over {
	case "events":
		what = fmt.Sprintf("%d events, over the limit of %d events per turn", p.events, p.lim.events)
	case "tool calls":
		what = fmt.Sprintf("%d tool calls, over the limit of %d tool calls per turn", p.toolCalls, p.lim.toolCalls)
	default:
		what = fmt.Sprintf("%d bytes of text to keep (streamed text, messages, names, tool arguments), over the limit of %d bytes per turn",
			p.bytes, p.lim.bytes)
	}
	return diag.Errorf(diag.Pos{File: p.file, Line: p.overLine}, CodeTooLarge,
		"the trace has %s; nothing from line %d on was kept and the turn is not scored", what, p.overLine)
}

// knownType is t itself for a known event type (so that every event of a
// type shares one string), else t.
func knownType(t string) string {
	for _, k := range [...]string{TypeStreamEvent, TypeRuntime, TypeRuntimeRaw, TypePhase, TypeError, TypeDone,
		TypeFinalAnswer, TypeSubAgentSpawned} {
		if t == k {
			return k
		}
	}
	return t
}

// toolName is payload.tool_name's string value v of line b, one string
// for every call of a tool (a trace calls a few tools many times): a name
// without escapes is looked up by its bytes before a string is made (a
// name seen is valid UTF-8, so raw bytes that are not never match one).
func (p *parser) toolName(n int, b []byte, v span) string {
	if v.kind == '"' {
		raw := b[v.start+1 : v.end-1]
		if bytes.IndexByte(raw, '\\') < 0 {
			if s, ok := p.names[string(raw)]; ok { // no allocation
				return s
			}
		}
	}
	return p.intern(p.str(n, b, v, "payload.tool_name"))
}

// intern shares one string for every tool name seen; at most maxInterned
// names are remembered.
func (p *parser) intern(s string) string {
	if s == "" {
		return s
	}
	if v, ok := p.names[s]; ok {
		return v
	}
	if p.names == nil {
		p.names = map[string]string{}
	}
	if len(p.names) < maxInterned {
		p.names[s] = s
	}
	return s
}

const maxInterned = 1024

// finalAnswerMessage applies final_answer's payload.message: a non-empty
// string is the answer and finalizes; true finalizes.
func (p *parser) finalAnswerMessage(n int, b []byte, m span) {
	switch m.kind {
	case '"':
		s := stringValue(b, m)
		if s == "" {
			return
		}
		p.finalAnswer, p.hasFinal = s, true
		p.textLen += utf8.RuneCountInString(s)
		p.turn.Finalized = true
	case 't':
		p.turn.Finalized = true
	case 0, 'f', 'n':
	default:
		p.mistyped(n, b, m, "payload.message", "a string or a bool")
	}
}

func (p *parser) finish() {
	t := p.turn
	t.StreamedText = string(p.deltas)
	t.TextLen = p.textLen
	switch {
	case p.hasFinal:
		t.Answer = p.finalAnswer
	case p.reply != "":
		t.Answer = p.reply
	default:
		t.Answer = t.StreamedText
	}
}

// decodeArgs decodes a tool's arguments: a JSON object, or a string holding
// one (some harnesses serialize tool input). Anything else is no arguments.
func (p *parser) decodeArgs(b []byte, v span) map[string]any {
	var m []byte
	switch v.kind {
	case '{':
		m = b[v.start:v.end]
	case '"':
		m = bytes.TrimSpace([]byte(stringValue(b, v)))
	}
	if len(m) > 0 && m[0] == '{' {
		if obj, err := p.args.Parse(m); err == nil && obj != nil {
			return obj
		}
	}
	return map[string]any{}
}

// messageText renders an error message: the string itself, or the JSON of
// any other value.
func messageText(b []byte, v span) string {
	switch v.kind {
	case 0, 'n':
		return ""
	case '"':
		return stringValue(b, v)
	}
	return string(b[v.start:v.end])
}
