package verify

import (
	"bytes"
	"encoding/json"
	"strings"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// addSpan keeps what one span says about the turn (docs/otel.md).
func (t *otlpTrace) addSpan(sp *tracepb.Span) {
	attrs := sp.GetAttributes()
	op := stringAttr(attrs, attrOperation)
	isRoot := len(sp.GetParentSpanId()) == 0
	for _, k := range []string{attrToolArgs, attrToolResult, attrOutput, attrInput, attrSystem} {
		if attr(attrs, k) != nil {
			t.content = true
		}
	}
	if c, ok := doubleAttr(attrs, attrCost); ok && (isRoot || t.cost == nil) {
		t.cost = &c
	}
	at := sp.GetStartTimeUnixNano()
	switch {
	case op == opExecuteTool:
		name := stringAttr(attrs, attrToolName)
		if name == "" {
			name = sp.GetName()
		}
		t.event(otlpEvent{at: at, kind: "tool", name: name, args: toolArgs(attr(attrs, attrToolArgs))})
	case op == opInvokeAgent && !isRoot:
		t.event(otlpEvent{at: at, kind: "sub_agent"})
	}
	if msg, failed := spanError(sp); failed {
		// An error is placed where its span ends: after the work that failed.
		t.event(otlpEvent{at: sp.GetEndTimeUnixNano(), kind: "error", name: msg})
	}
	if !isRoot || (t.root != nil && op != opInvokeAgent) {
		return
	}
	r := &otlpRoot{start: at, end: sp.GetEndTimeUnixNano()}
	r.answer, r.finish, r.hasAnswer = outputMessages(attr(attrs, attrOutput))
	for _, ev := range sp.GetEvents() {
		if a, f, ok := eventAnswer(ev); ok {
			r.answer, r.finish, r.hasAnswer = a, f, true
			t.content = true
		}
	}
	t.root = r
}

func (t *otlpTrace) event(e otlpEvent) {
	t.seq++
	e.seq = t.seq
	t.events = append(t.events, e)
}

// spanError says whether a span failed (status ERROR or an error.type
// attribute) and with what message.
func spanError(sp *tracepb.Span) (string, bool) {
	st := sp.GetStatus()
	typ := stringAttr(sp.GetAttributes(), attrErrorType)
	if st.GetCode() != tracepb.Status_STATUS_CODE_ERROR && typ == "" {
		return "", false
	}
	parts := []string{"span " + sp.GetName()}
	for _, p := range []string{typ, st.GetMessage()} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ": "), true
}

// toolArgs is gen_ai.tool.call.arguments as trace JSON: a string (a
// serialized JSON object, which the trace parser decodes) or an object.
func toolArgs(v *commonpb.AnyValue) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(anyValue(v))
	if err != nil {
		return nil
	}
	return b
}

// genAIMessage is one message of gen_ai.output.messages.
type genAIMessage struct {
	Role  string `json:"role"`
	Parts []struct {
		Type    string `json:"type"`
		Content any    `json:"content"`
	} `json:"parts"`
	FinishReason string `json:"finish_reason"`
}

// outputMessages reads gen_ai.output.messages (a JSON string or a
// structured array): the text parts of its last message and that message's
// finish reason.
func outputMessages(v *commonpb.AnyValue) (text, finish string, ok bool) {
	if v == nil {
		return "", "", false
	}
	raw := []byte(v.GetStringValue())
	if _, isString := v.GetValue().(*commonpb.AnyValue_StringValue); !isString {
		var err error
		if raw, err = json.Marshal(anyValue(v)); err != nil {
			return "", "", false
		}
	}
	var msgs []genAIMessage
	if err := json.Unmarshal(raw, &msgs); err != nil || len(msgs) == 0 {
		return "", "", false
	}
	last := msgs[len(msgs)-1]
	var b strings.Builder
	for _, p := range last.Parts {
		if s, isText := p.Content.(string); isText && p.Type == "text" {
			b.WriteString(s)
		}
	}
	return b.String(), last.FinishReason, true
}

// eventAnswer reads the older span events that carry the reply:
// gen_ai.choice (attributes finish_reason and message {content}) and
// gen_ai.content.completion (attribute gen_ai.completion: a JSON list of
// {role, content}, or text), which has no finish reason.
func eventAnswer(ev *tracepb.Span_Event) (text, finish string, ok bool) {
	attrs := ev.GetAttributes()
	switch ev.GetName() {
	case eventChoice:
		var m struct {
			Content string `json:"content"`
		}
		msg := attr(attrs, "message")
		if msg == nil {
			return "", "", false
		}
		raw := []byte(msg.GetStringValue())
		if _, isString := msg.GetValue().(*commonpb.AnyValue_StringValue); !isString {
			raw, _ = json.Marshal(anyValue(msg))
		}
		if json.Unmarshal(raw, &m) != nil {
			return "", "", false
		}
		return m.Content, stringAttr(attrs, "finish_reason"), true
	case eventCompletion:
		s := stringAttr(attrs, "gen_ai.completion")
		var msgs []struct {
			Content string `json:"content"`
		}
		if json.Unmarshal([]byte(s), &msgs) == nil && len(msgs) > 0 {
			return msgs[len(msgs)-1].Content, "", true
		}
		return s, "", s != ""
	}
	return "", "", false
}

// otlpTurn is a turn's trace as read from OTLP spans; load writes it as
// the NDJSON trace lines the engine parses (docs/otel.md).
type otlpTurn struct {
	events []otlpEvent
	root   *otlpRoot
}

type (
	otlpPayload struct {
		EventType string          `json:"event_type"`
		ToolName  string          `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input,omitempty"`
	}
	otlpLine struct {
		Type      string       `json:"type"`
		Payload   *otlpPayload `json:"payload,omitempty"`
		Message   string       `json:"message,omitempty"`
		Reply     *string      `json:"reply,omitempty"`
		Finalized *bool        `json:"finalized,omitempty"`
	}
)

func (o *otlpTurn) load() (traceNDJSON, before, after []byte, err error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	write := func(l otlpLine) {
		if err == nil {
			err = enc.Encode(l)
		}
	}
	for _, e := range o.events {
		switch e.kind {
		case "tool":
			write(otlpLine{Type: "runtime", Payload: &otlpPayload{EventType: "tool_start", ToolName: e.name, ToolInput: e.args}})
			write(otlpLine{Type: "runtime", Payload: &otlpPayload{EventType: "tool_end", ToolName: e.name}})
		case "sub_agent":
			write(otlpLine{Type: "sub_agent_spawned"})
		case "error":
			write(otlpLine{Type: "error", Message: e.name})
		}
	}
	if r := o.root; r != nil && r.hasAnswer {
		fin := r.finish == "stop"
		write(otlpLine{Type: "done", Reply: &r.answer, Finalized: &fin})
	}
	return buf.Bytes(), nil, nil, err
}
