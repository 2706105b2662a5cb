package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// jsonView is what a trace says, derived line by line with encoding/json
// (which keeps the last of repeated members): the streamed text, each
// runtime event's event type and tool name, the tool calls' names and the
// answer. It is the reference for the members Parse finds in one scan.
type jsonView struct {
	Text     string
	Runtime  map[int][2]string // line -> event type, tool name
	Calls    []string
	Answer   string
	Compared bool
}

// viewOf derives src's jsonView; Compared is false when a line holds a
// backslash (an escaped key never matches in Parse, by design, where
// encoding/json decodes it), so nothing can be compared.
func viewOf(src []byte) jsonView {
	v := jsonView{Runtime: map[int][2]string{}, Compared: true}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	obj := func(m map[string]any, k string) map[string]any { o, _ := m[k].(map[string]any); return o }
	var reply, final string
	n := 0
	for l := range bytes.SplitSeq(src, []byte("\n")) {
		n++
		l = bytes.Trim(l, " \t\r\n")
		var m map[string]any
		if len(l) == 0 || l[0] != '{' || json.Unmarshal(l, &m) != nil {
			continue
		}
		if bytes.IndexByte(l, '\\') >= 0 {
			return jsonView{}
		}
		switch str(m, "type") {
		case TypeStreamEvent:
			if e := obj(m, "event"); str(e, "type") == "content_block_delta" {
				if d := obj(e, "delta"); str(d, "type") == "text_delta" {
					v.Text += str(d, "text")
				}
			}
		case TypeRuntime, TypeRuntimeRaw:
			pl := obj(m, "payload")
			et, name := str(pl, "event_type"), str(pl, "tool_name")
			v.Runtime[n] = [2]string{et, name}
			if et == EventToolStart {
				v.Calls = append(v.Calls, name)
			}
		case TypeFinalAnswer:
			if s := str(obj(m, "payload"), "message"); s != "" {
				final = s
			}
		case TypeDone:
			if s := str(m, "reply"); s != "" {
				reply = s
			}
		}
	}
	switch {
	case final != "":
		v.Answer = final
	case reply != "":
		v.Answer = reply
	default:
		v.Answer = v.Text
	}
	return v
}

// viewOfTurn is the same view of what Parse gave.
func viewOfTurn(turn *Turn) jsonView {
	v := jsonView{Text: turn.StreamedText, Runtime: map[int][2]string{}, Answer: turn.Answer, Compared: true}
	for _, e := range turn.Events {
		if e.Type == TypeRuntime || e.Type == TypeRuntimeRaw {
			v.Runtime[e.Line] = [2]string{e.EventType, e.ToolName}
		}
	}
	for _, c := range turn.ToolCalls {
		v.Calls = append(v.Calls, c.Name)
	}
	return v
}

// checkNestedMembers compares Parse's turn of src with encoding/json's view.
func checkNestedMembers(t *testing.T, src []byte, turn *Turn) {
	t.Helper()
	want := viewOf(src)
	if !want.Compared {
		return
	}
	if diff := cmp.Diff(want, viewOfTurn(turn)); diff != "" {
		t.Errorf("Parse(%q) differs from encoding/json's reading (-json +Parse):\n%s", src, diff)
	}
}

// TestParseNestedMembersMatchEncodingJSON: the members of a payload, an
// event and its delta, found in the same scan as the line's own, are those
// of the last member of that name at that level and nowhere else.
func TestParseNestedMembersMatchEncodingJSON(t *testing.T) {
	t.Parallel()
	delta := func(text string) string {
		return `{"type":"content_block_delta","delta":{"type":"text_delta","text":"` + text + `"}}`
	}
	for name, lines := range map[string][]string{
		"plain":                                {`{"type":"stream_event","event":` + delta("a") + `}`},
		"type after event":                     {`{"event":` + delta("a") + `,"type":"stream_event"}`},
		"event type after delta":               {`{"type":"stream_event","event":{"delta":{"text":"b","type":"text_delta"},"type":"content_block_delta"}}`},
		"second event of another type":         {`{"type":"stream_event","event":` + delta("x") + `,"event":{"type":"other"}}`},
		"second event without text":            {`{"type":"stream_event","event":` + delta("x") + `,"event":{"type":"content_block_delta","delta":{"type":"text_delta"}}}`},
		"second event without delta":           {`{"type":"stream_event","event":` + delta("x") + `,"event":{"type":"content_block_delta"}}`},
		"second event null":                    {`{"type":"stream_event","event":` + delta("x") + `,"event":null}`},
		"second event a string":                {`{"type":"stream_event","event":` + delta("x") + `,"event":"y"}`},
		"second delta without text":            {`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"},"delta":{"type":"text_delta"}}}`},
		"second delta an array":                {`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"},"delta":[1]}}`},
		"first event without text":             {`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta"}},"event":` + delta("z") + `}`},
		"delta at the top":                     {`{"type":"stream_event","delta":{"type":"text_delta","text":"x"},"event":{"type":"content_block_delta"}}`},
		"delta at the top after the event":     {`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta"}},"delta":{"type":"text_delta","text":"x"}}`},
		"delta in the payload after the event": {`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta"}},"payload":{"delta":{"type":"text_delta","text":"x"}}}`},
		"delta deeper":                         {`{"type":"stream_event","event":{"type":"content_block_delta","x":{"delta":{"type":"text_delta","text":"x"}}}}`},
		"delta in an array":                    {`{"type":"stream_event","event":{"type":"content_block_delta","x":[{"delta":{"type":"text_delta","text":"x"}}]}}`},
		"event in the payload":                 {`{"type":"stream_event","payload":{"event":` + delta("x") + `}}`},
		"type in the event only":               {`{"event":{"type":"stream_event","delta":{"type":"text_delta","text":"x"}}}`},
		"runtime": {
			`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"a","tool_input":{"q":1}}}`,
			`{"payload":{"tool_name":"b","event_type":"tool_end"},"type":"runtime"}`,
		},
		"second payload": {
			`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"a"},"payload":{"event_type":"tool_end"}}`,
			`{"type":"runtime_raw","payload":{"tool_name":"a"},"payload":{"event_type":"tool_start","tool_name":"c"}}`,
			`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"d"},"payload":null}`,
		},
		"payload in the event": {`{"type":"runtime","event":{"payload":{"event_type":"tool_start","tool_name":"a"}},"payload":{}}`},
		"payload deeper":       {`{"type":"runtime","x":{"payload":{"event_type":"tool_start","tool_name":"a"}},"payload":{"event_type":"loop_iteration"}}`},
		"final answer":         {`{"type":"final_answer","payload":{"message":"first"},"payload":{"message":"second"}}`},
		"final answer cleared": {`{"type":"final_answer","payload":{"message":"first"},"payload":{"other":1}}`, `{"type":"done","reply":"r"}`},
		"message at the top":   {`{"type":"final_answer","message":"top","payload":{"x":{"message":"deep"}}}`, `{"type":"done","reply":"r"}`},
		"same line, all kinds": {`{"type":"runtime","event":` + delta("e") + `,"payload":{"event_type":"tool_start","tool_name":"t","message":"m"},"delta":{"text":"d"}}`},
		"nothing left from the line before": {
			`{"type":"stream_event","event":` + delta("a") + `}`,
			`{"type":"stream_event","event":{"type":"content_block_delta"}}`,
			`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta"}}}`,
			`{"type":"stream_event"}`,
			`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"a"}}`,
			`{"type":"runtime"}`,
			`{"type":"runtime","payload":{}}`,
			`{"type":"final_answer","payload":{"message":"m"}}`,
			`{"type":"final_answer","payload":{}}`,
		},
		"invalid after the nested object": {`{"type":"stream_event","event":` + delta("x") + `,}`, `{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"a"},"x":tru}`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := []byte(ndjson(lines...))
			turn, _ := parseString(t, string(src))
			checkNestedMembers(t, src, turn)
		})
	}
}

// TestParseToolNamesWithEscapes: a tool name is the decoded string, whether
// or not an equal name was seen before spelt another way.
func TestParseToolNamesWithEscapes(t *testing.T) {
	t.Parallel()
	call := func(name string) string {
		return `{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"` + name + `"}}`
	}
	turn, _ := parseString(t, ndjson(call(`a\\u0062`), call(`a\u0062`), call(`ab`), call(`a\\u0062`), call("\xff"), call(`\ufffd`)))
	var got []string
	for _, c := range turn.ToolCalls {
		got = append(got, c.Name)
	}
	want := []string{`a\u0062`, "ab", "ab", `a\u0062`, "\ufffd", "\ufffd"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool names (-want +got):\n%s", diff)
	}
}

// TestParseEventsCapacityBounded: the capacity Parse gives a trace's events
// from the lines read ahead is bounded, however many blank lines there are.
func TestParseEventsCapacityBounded(t *testing.T) {
	t.Parallel()
	src := strings.Repeat("\n", 60_000) + ndjson(strings.Repeat(`{"type":"phase","phase":"p"}`+"\n", 20))
	turn, _ := parseString(t, src)
	if len(turn.Events) != 20 || cap(turn.Events) > maxEventsHint {
		t.Errorf("Parse(60,000 blank lines, 20 events) = %d events, capacity %d, want 20 and at most %d",
			len(turn.Events), cap(turn.Events), maxEventsHint)
	}
	src = ndjson(strings.Repeat(`{"type":"phase","phase":"p"}`+"\n", 3000))
	if turn, _ = parseString(t, src); len(turn.Events) != 6000-1 && len(turn.Events) != 3000 {
		t.Errorf("Parse(3,000 events) = %d events, want 3,000", len(turn.Events))
	}
}

// TestParseStreamedTextIsItsOwn: traces parsed one after another and side
// by side (the text buffer is recycled) each keep their own streamed text.
func TestParseStreamedTextIsItsOwn(t *testing.T) {
	t.Parallel()
	text := func(i int) string { return strings.Repeat(fmt.Sprintf("<%d>", i), 1+i%7) }
	src := func(i int) string {
		return ndjson(`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"`+text(i)+`"}}}`,
			`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"!"}}}`)
	}
	turns := make([]*Turn, 200)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(turns); i += 4 {
				turns[i], _, _ = Parse("t.ndjson", strings.NewReader(src(i)))
			}
		}()
	}
	wg.Wait()
	for i, turn := range turns {
		if want := text(i) + "!"; turn.StreamedText != want || turn.Answer != want {
			t.Errorf("trace %d: streamed text %q, answer %q, want %q", i, turn.StreamedText, turn.Answer, want)
		}
	}
}

// TestParseToolArgsAcrossTraces: traces parsed one after another (their
// argument keys and short values shared through the recycled parser) each
// get arguments equal to encoding/json's, in maps of their own.
func TestParseToolArgsAcrossTraces(t *testing.T) {
	t.Parallel()
	input := `{"q":"release","limit":10,"nested":{"q":"release"},"list":["a",1,null],"long":"` + strings.Repeat("x", 100) + `"}`
	src := ndjson(`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"search","tool_input":`+input+`}}`,
		`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"search","args":`+input+`}}`)
	var want map[string]any
	if err := json.Unmarshal([]byte(input), &want); err != nil {
		t.Fatal(err)
	}
	var turns []*Turn
	for range 3 {
		turn, _ := parseString(t, src)
		turns = append(turns, turn)
	}
	turns[0].ToolCalls[0].Args["q"] = "changed"
	turns[0].ToolCalls[0].Args["nested"].(map[string]any)["q"] = "changed"
	for i, turn := range turns[1:] {
		for j, c := range turn.ToolCalls {
			if diff := cmp.Diff(want, c.Args); diff != "" {
				t.Errorf("trace %d, call %d: arguments (-encoding/json +Parse):\n%s", i+1, j, diff)
			}
		}
	}
}
