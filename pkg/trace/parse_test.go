package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/assay-eval/assay/pkg/diag"
	"github.com/google/go-cmp/cmp"
)

// ndjson joins lines into an NDJSON trace.
func ndjson(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

func parseString(t *testing.T, src string) (*Turn, diag.List) {
	t.Helper()
	turn, diags, err := Parse("t.ndjson", strings.NewReader(src))
	if err != nil {
		t.Fatalf("Parse(%q) error = %v, want nil", src, err)
	}
	return turn, diags
}

// TestProcessScoreReferenceVectors holds the reference vectors,
// each written as an NDJSON trace.
func TestProcessScoreReferenceVectors(t *testing.T) {
	t.Parallel()
	reply60 := strings.Repeat("r", 60)
	reply80 := strings.Repeat("é", 80) // runes, not bytes
	msg49 := strings.Repeat("m", 49)
	delta50 := strings.Repeat("d", 50)
	nineStarts := make([]string, 0, 10)
	for i := range 9 {
		nineStarts = append(nineStarts, fmt.Sprintf(`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"t%d"}}`, i))
	}
	tests := []struct {
		name  string
		trace string
		want  float64
	}{
		{"empty trace", "", 0.25},
		{"dispatch, one tool, done with reply", ndjson(
			`{"type":"phase","phase":"skill_dispatch"}`,
			`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"company_task_create"}}`,
			`{"type":"runtime","payload":{"event_type":"tool_end","tool_name":"company_task_create"}}`,
			`{"type":"done","reply":"`+reply60+`","finalized":true}`,
		), 1.0},
		{"error", ndjson(`{"type":"error","message":"agent crashed"}`), 0.1},
		{"tool and a 49-char final answer", ndjson(
			`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"x"}}`,
			`{"type":"runtime","payload":{"event_type":"tool_end","tool_name":"x"}}`,
			`{"type":"final_answer","payload":{"message":"`+msg49+`"}}`,
		), 0.85},
		{"final answer true", ndjson(`{"type":"final_answer","payload":{"message":true}}`), 0.75},
		{"50 chars of text deltas", ndjson(
			`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"`+delta50[:20]+`"}}}`,
			`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"`+delta50[20:]+`"}}}`,
		), 0.4},
		{"nine tool starts and done", ndjson(append(nineStarts,
			`{"type":"done","reply":"`+reply80+`","finalized":true}`)...), 0.9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			turn, diags := parseString(t, tt.trace)
			if len(diags) != 0 {
				t.Errorf("Parse diagnostics = %v, want none", diags)
			}
			if got := ProcessScore(turn); got != tt.want {
				t.Errorf("ProcessScore(%q) = %v, want %v", tt.trace, got, tt.want)
			}
		})
	}
}

func TestProcessScoreNil(t *testing.T) {
	if got := ProcessScore(nil); got != 0.25 {
		t.Errorf("ProcessScore(nil) = %v, want 0.25", got)
	}
}

func TestParseDerivesTurn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		trace string
		want  Turn
	}{
		{
			name:  "empty",
			trace: "",
			want:  Turn{Events: []Event{}, ToolCalls: []ToolCall{}, ErrorMessages: []string{}, Phases: []string{}},
		},
		{
			name: "full harness turn",
			trace: ndjson(
				`{"type":"phase","phase":"skill_dispatch","skill":"company_tasks"}`,
				`{"type":"runtime","payload":{"event_type":"loop_iteration","iteration":1}}`,
				`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"company_task_create","tool_input":{"title":"Fix","priority":8}}}`,
				`{"type":"runtime_raw","payload":{"event_type":"tool_end","tool_name":"company_task_create","result":{"ok":true}}}`,
				`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"Créé "}}}`,
				`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"la tâche."}}}`,
				`{"type":"stream_event","event":{"type":"message_stop"}}`,
				`{"type":"usage","input_tokens":10}`,
				`{"type":"done","reply":"Created task T-1.","finalized":true,"task_id":"T-1","task_action":"create"}`,
			),
			want: Turn{
				Events: []Event{
					{Line: 1, Type: "phase", Phase: "skill_dispatch"},
					{Line: 2, Type: "runtime", EventType: "loop_iteration"},
					{Line: 3, Type: "runtime", EventType: "tool_start", ToolName: "company_task_create"},
					{Line: 4, Type: "runtime_raw", EventType: "tool_end", ToolName: "company_task_create"},
					{Line: 5, Type: "stream_event"},
					{Line: 6, Type: "stream_event"},
					{Line: 7, Type: "stream_event"},
					{Line: 8, Type: "usage"},
					{Line: 9, Type: "done"},
				},
				ToolCalls:     []ToolCall{{Name: "company_task_create", Args: map[string]any{"title": "Fix", "priority": 8.0}}},
				ToolEvents:    2,
				Answer:        "Created task T-1.",
				StreamedText:  "Créé la tâche.",
				TextLen:       14 + 17,
				Finalized:     true,
				ErrorMessages: []string{},
				Phases:        []string{"skill_dispatch"},
				LoopIters:     1,
				TaskID:        "T-1",
				TaskAction:    "create",
			},
		},
		{
			name: "args, string tool_input, absent args, numeric task id",
			trace: ndjson(
				`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"a","args":{"k":"v"}}}`,
				`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"b","tool_input":"{\"q\":1}"}}`,
				`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"c"}}`,
				`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"d","tool_input":null,"args":{"z":true}}}`,
				`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"e","tool_input":[1,2]}}`,
				`{"type":"done","task_id":42}`,
			),
			want: Turn{
				Events: []Event{
					{Line: 1, Type: "runtime", EventType: "tool_start", ToolName: "a"},
					{Line: 2, Type: "runtime", EventType: "tool_start", ToolName: "b"},
					{Line: 3, Type: "runtime", EventType: "tool_start", ToolName: "c"},
					{Line: 4, Type: "runtime", EventType: "tool_start", ToolName: "d"},
					{Line: 5, Type: "runtime", EventType: "tool_start", ToolName: "e"},
					{Line: 6, Type: "done"},
				},
				ToolCalls: []ToolCall{
					{Name: "a", Args: map[string]any{"k": "v"}},
					{Name: "b", Args: map[string]any{"q": 1.0}},
					{Name: "c", Args: map[string]any{}},
					{Name: "d", Args: map[string]any{"z": true}},
					{Name: "e", Args: map[string]any{}},
				},
				ToolEvents:    5,
				ErrorMessages: []string{},
				Phases:        []string{},
				TaskID:        "42",
			},
		},
		{
			name: "final answer wins over reply and deltas; sub-agent; finalize tool",
			trace: ndjson(
				`{"type":"sub_agent_spawned","agent":"researcher"}`,
				`{"type":"runtime","payload":{"event_type":"tool_end","tool_name":"finalize_response"}}`,
				`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"abc"}}}`,
				`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":"{}"}}}`,
				`{"type":"done","reply":"reply","finalized":false}`,
				`{"type":"final_answer","payload":{"message":"final"}}`,
				`{"type":"error","message":{"code":500}}`,
				`{"type":"error"}`,
			),
			want: Turn{
				Events: []Event{
					{Line: 1, Type: "sub_agent_spawned"},
					{Line: 2, Type: "runtime", EventType: "tool_end", ToolName: "finalize_response"},
					{Line: 3, Type: "stream_event"},
					{Line: 4, Type: "stream_event"},
					{Line: 5, Type: "done"},
					{Line: 6, Type: "final_answer"},
					{Line: 7, Type: "error"},
					{Line: 8, Type: "error"},
				},
				ToolCalls:     []ToolCall{},
				ToolEvents:    2,
				SubAgents:     1,
				Answer:        "final",
				StreamedText:  "abc",
				TextLen:       3 + 5 + 5,
				Finalized:     true,
				Error:         true,
				ErrorMessages: []string{`{"code":500}`, ""},
				Phases:        []string{},
			},
		},
		{
			name: "reply wins over deltas; empty final answer and false do not finalize",
			trace: ndjson(
				`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"abc"}}}`,
				`{"type":"final_answer","payload":{"message":""}}`,
				`{"type":"final_answer","payload":{"message":false}}`,
				`{"type":"done","reply":"the reply"}`,
			),
			want: Turn{
				Events: []Event{
					{Line: 1, Type: "stream_event"},
					{Line: 2, Type: "final_answer"},
					{Line: 3, Type: "final_answer"},
					{Line: 4, Type: "done"},
				},
				ToolCalls:     []ToolCall{},
				Answer:        "the reply",
				StreamedText:  "abc",
				TextLen:       3 + 9,
				ErrorMessages: []string{},
				Phases:        []string{},
			},
		},
		{
			name:  "deltas are the answer when nothing else is; CRLF and blank lines",
			trace: "\r\n" + `{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"only"}}}` + "\r\n   \n\n",
			want: Turn{
				Events:        []Event{{Line: 2, Type: "stream_event"}},
				ToolCalls:     []ToolCall{},
				Answer:        "only",
				StreamedText:  "only",
				TextLen:       4,
				ErrorMessages: []string{},
				Phases:        []string{},
			},
		},
		{
			name:  "last line without newline",
			trace: `{"type":"phase","phase":"a"}` + "\n" + `{"type":"phase","phase":"b"}`,
			want: Turn{
				Events:        []Event{{Line: 1, Type: "phase", Phase: "a"}, {Line: 2, Type: "phase", Phase: "b"}},
				ToolCalls:     []ToolCall{},
				ErrorMessages: []string{},
				Phases:        []string{"a", "b"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, diags := parseString(t, tt.trace)
			if len(diags) != 0 {
				t.Errorf("Parse diagnostics = %v, want none", diags)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.trace, diff)
			}
		})
	}
}

func TestParseWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		trace      string
		wantEvents []Event
		wantDiags  []string
	}{
		{
			name:       "not JSON",
			trace:      ndjson(`{"type":"phase","phase":"a"}`, `starting agent...`, `{"type":"done","reply":"x"}`),
			wantEvents: []Event{{Line: 1, Type: "phase", Phase: "a"}, {Line: 2, Type: "raw", Text: "starting agent..."}, {Line: 3, Type: "done"}},
			wantDiags:  []string{"t.ndjson:2:1: warning: trace.malformed_line: not a JSON object; kept as a raw event"},
		},
		{
			name:       "truncated JSON object",
			trace:      ndjson(`  {"type":"phase","phase"`),
			wantEvents: []Event{{Line: 1, Type: "raw", Text: `  {"type":"phase","phase"`}},
			wantDiags:  []string{"t.ndjson:1:26: warning: trace.malformed_line: invalid JSON: unexpected end of JSON input; kept as a raw event"},
		},
		{
			name:       "a JSON array is not an event",
			trace:      ndjson(`[1,2]`),
			wantEvents: []Event{{Line: 1, Type: "raw", Text: "[1,2]"}},
			wantDiags:  []string{"t.ndjson:1:1: warning: trace.malformed_line: not a JSON object; kept as a raw event"},
		},
		{
			name:       "mistyped field is ignored, the rest is read",
			trace:      ndjson(`{"type":"done","reply":5,"finalized":true}`),
			wantEvents: []Event{{Line: 1, Type: "done"}},
			wantDiags:  []string{"t.ndjson:1:24: warning: trace.field_type: field reply: want a string, got a number; ignored"},
		},
		{
			name:       "final answer message of another type",
			trace:      ndjson(`{"type":"final_answer","payload":{"message":3}}`),
			wantEvents: []Event{{Line: 1, Type: "final_answer"}},
			wantDiags:  []string{"t.ndjson:1:45: warning: trace.field_type: field payload.message: want a string or a bool, got a number; ignored"},
		},
		{
			name:       "trailing garbage after the object",
			trace:      ndjson(`{"type":"phase"} x`),
			wantEvents: []Event{{Line: 1, Type: "raw", Text: `{"type":"phase"} x`}},
			wantDiags:  []string{`t.ndjson:1:18: warning: trace.malformed_line: invalid JSON: invalid character 'x' after top-level value; kept as a raw event`},
		},
		{
			name:       "bad escape, column in runes",
			trace:      ndjson(`{"é":"\q"}`),
			wantEvents: []Event{{Line: 1, Type: "raw", Text: `{"é":"\q"}`}},
			wantDiags:  []string{`t.ndjson:1:8: warning: trace.malformed_line: invalid JSON: invalid character 'q' in string escape code; kept as a raw event`},
		},
		{
			name:       "bad number",
			trace:      ndjson(`{"a":01}`),
			wantEvents: []Event{{Line: 1, Type: "raw", Text: `{"a":01}`}},
			wantDiags:  []string{`t.ndjson:1:7: warning: trace.malformed_line: invalid JSON: invalid character '1' after object key:value pair; kept as a raw event`},
		},
		{
			name:       "payload that is not an object",
			trace:      ndjson(`{"type":"runtime","payload":"tool_start"}`),
			wantEvents: []Event{{Line: 1, Type: "runtime"}},
			wantDiags:  []string{`t.ndjson:1:29: warning: trace.field_type: field payload: want an object, got a string; ignored`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, diags := parseString(t, tt.trace)
			if diff := cmp.Diff(tt.wantEvents, got.Events); diff != "" {
				t.Errorf("Parse(%q) events mismatch (-want +got):\n%s", tt.trace, diff)
			}
			var gotDiags []string
			for _, d := range diags {
				gotDiags = append(gotDiags, d.String())
			}
			if diff := cmp.Diff(tt.wantDiags, gotDiags); diff != "" {
				t.Errorf("Parse(%q) diagnostics mismatch (-want +got):\n%s", tt.trace, diff)
			}
		})
	}
}

func TestParseMistypedFieldKeepsOtherFields(t *testing.T) {
	got, _ := parseString(t, ndjson(`{"type":"done","reply":5,"finalized":true}`))
	if !got.Finalized {
		t.Errorf("Parse(done with mistyped reply).Finalized = false, want true")
	}
}

func TestParseRawTextIsBounded(t *testing.T) {
	line := strings.Repeat("é", 300) // 600 bytes
	got, _ := parseString(t, ndjson(line))
	if n := len(got.Events[0].Text); n > rawTextMax || n < rawTextMax-1 {
		t.Errorf("raw event text is %d bytes, want at most %d", n, rawTextMax)
	}
	if !strings.HasPrefix(line, got.Events[0].Text) {
		t.Errorf("raw event text %q is not a prefix of the line", got.Events[0].Text)
	}
}

// repeatReader yields n copies of byte c without holding them.
type repeatReader struct {
	c     byte
	n     int
	block []byte
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	if r.block == nil {
		r.block = bytes.Repeat([]byte{r.c}, 64<<10)
	}
	k := copy(p[:min(len(p), r.n)], r.block)
	r.n -= k
	return k, nil
}

func TestParseLongLines(t *testing.T) {
	t.Parallel()
	bigText := strings.Repeat("x", 1<<20) // a 1 MiB delta: longer than the reader's buffer, within the limit
	src := io.MultiReader(
		strings.NewReader(`{"type":"phase","phase":"start"}`+"\n"),
		strings.NewReader(`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"`+bigText+`"}}}`+"\n"),
		&repeatReader{c: 'a', n: MaxLineBytes + 10}, // one line over the limit
		strings.NewReader("\n"+`{"type":"done","reply":"ok","finalized":true}`+"\n"),
	)
	got, diags, err := Parse("big.ndjson", src)
	if err != nil {
		t.Fatalf("Parse(long lines) error = %v, want nil", err)
	}
	wantEvents := []Event{{Line: 1, Type: "phase", Phase: "start"}, {Line: 2, Type: "stream_event"}, {Line: 4, Type: "done"}}
	if diff := cmp.Diff(wantEvents, got.Events); diff != "" {
		t.Errorf("Parse(long lines) events mismatch (-want +got):\n%s", diff)
	}
	if got.TextLen != len(bigText)+2 || !got.Finalized {
		t.Errorf("Parse(long lines) TextLen, Finalized = %d, %v, want %d, true", got.TextLen, got.Finalized, len(bigText)+2)
	}
	if len(diags) != 1 || diags[0].Code != CodeLineTooLong || diags[0].Pos.Line != 3 || diags[0].Severity != diag.Warning {
		t.Errorf("Parse(long lines) diagnostics = %v, want one %s warning at line 3", diags, CodeLineTooLong)
	}
}

// TestParseLineLimit checks the limit's boundary with a small limit (the
// real one is exercised by TestParseLongLines): a line of exactly the limit
// is read, one byte more is skipped, whatever the reader's buffer size.
func TestParseLineLimit(t *testing.T) {
	t.Parallel()
	prefix, suffix := `{"type":"done","reply":"`, `"}`
	for _, limit := range []int{100, 70000, 200000} {
		for _, extra := range []int{0, 1} {
			fill := limit - len(prefix) - len(suffix) + extra
			src := io.MultiReader(strings.NewReader(prefix), &repeatReader{c: 'r', n: fill}, strings.NewReader(suffix+"\r\n"+`{"type":"phase","phase":"x"}`))
			got, diags, err := parse("limit.ndjson", src, limit, defaultLimits)
			if err != nil {
				t.Fatalf("parse(limit %d, extra %d) error = %v", limit, extra, err)
			}
			wantText, wantDiags := fill, 0
			if extra > 0 {
				wantText, wantDiags = 0, 1
			}
			if got.TextLen != wantText || len(diags) != wantDiags || len(got.Phases) != 1 {
				t.Errorf("parse(line of limit %d + %d bytes) = text_len %d, diagnostics %v, phases %v; want %d, %d diagnostics, 1 phase",
					limit, extra, got.TextLen, diags, got.Phases, wantText, wantDiags)
			}
		}
	}
}

var errDisk = errors.New("disk on fire")

type failingReader struct{ r io.Reader }

func (f failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errDisk
	}
	return n, err
}

func TestParseIOError(t *testing.T) {
	_, _, err := Parse("x.ndjson", failingReader{strings.NewReader(`{"type":"phase","phase":"a"}` + "\n")})
	if !errors.Is(err, errDisk) {
		t.Errorf("Parse(failing reader) error = %v, want it to wrap %v", err, errDisk)
	}
	if _, _, err := ParseFile("testdata/does-not-exist.ndjson"); err == nil {
		t.Errorf("ParseFile(missing file) error = nil, want an error")
	}
}

func TestParseFile(t *testing.T) {
	got, diags, err := ParseFile("testdata/harness_turn.ndjson")
	if err != nil || len(diags) != 0 {
		t.Fatalf("ParseFile(testdata/harness_turn.ndjson) = %v, %v, want no error and no diagnostics", diags, err)
	}
	if got.ToolEvents != 4 || len(got.ToolCalls) != 2 || !got.Finalized || ProcessScore(got) != 1.0 {
		t.Errorf("ParseFile(testdata/harness_turn.ndjson) = tool_events %d, tool_calls %d, finalized %v, process %v; want 4, 2, true, 1",
			got.ToolEvents, len(got.ToolCalls), got.Finalized, ProcessScore(got))
	}
}

// checkInvariants holds for every trace, whatever its content.
func checkInvariants(t *testing.T, src []byte, turn *Turn, diags diag.List) {
	t.Helper()
	if turn.ToolEvents < len(turn.ToolCalls)+turn.SubAgents {
		t.Errorf("tool_events %d < tool_calls %d + sub_agents %d", turn.ToolEvents, len(turn.ToolCalls), turn.SubAgents)
	}
	if turn.Error != (len(turn.ErrorMessages) > 0) {
		t.Errorf("error %v but %d error messages", turn.Error, len(turn.ErrorMessages))
	}
	if n := len([]rune(turn.Answer)); turn.TextLen < n {
		t.Errorf("text_len %d < answer runes %d", turn.TextLen, n)
	}
	if s := ProcessScore(turn); s < 0 || s > 1 {
		t.Errorf("ProcessScore = %v, outside [0,1]", s)
	}
	nonBlank := 0
	for l := range bytes.SplitSeq(src, []byte("\n")) {
		if len(bytes.Trim(l, " \t\r\n")) > 0 {
			nonBlank++
		}
	}
	if len(turn.Events) > nonBlank {
		t.Errorf("%d events from %d non-blank lines", len(turn.Events), nonBlank)
	}
	last := 0
	for _, e := range turn.Events {
		if e.Line <= last {
			t.Errorf("event lines not increasing: %d after %d", e.Line, last)
		}
		last = e.Line
	}
	for _, c := range turn.ToolCalls {
		if c.Args == nil {
			t.Errorf("tool call %q has nil args, want an empty map", c.Name)
		}
	}
	for _, d := range diags {
		if d.Severity != diag.Warning || d.Pos.Line < 1 {
			t.Errorf("diagnostic %v: want a positioned warning", d)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte(ndjson(`{"type":"error","message":"x"}`, `not json`, `{"type":"final_answer","payload":{"message":true}}`)))
	f.Add(benchTrace(20))
	f.Add([]byte(ndjson(`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}},"event":{"type":"content_block_delta","delta":{}}}`,
		`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"a"},"payload":{"event_type":"tool_end"}}`)))
	f.Fuzz(func(t *testing.T, src []byte) {
		turn, diags, err := Parse("fuzz.ndjson", bytes.NewReader(src))
		if err != nil {
			t.Fatalf("Parse error = %v, want nil for an in-memory reader", err)
		}
		checkInvariants(t, src, turn, diags)
		checkNestedMembers(t, src, turn)
		// The scanner accepts exactly the lines encoding/json accepts as objects.
		malformed := map[int]bool{}
		for _, d := range diags {
			if d.Code == CodeMalformedLine {
				malformed[d.Pos.Line] = true
			}
		}
		n := 0
		for l := range bytes.SplitSeq(src, []byte("\n")) {
			n++
			l = bytes.Trim(l, " \t\r\n") // JSON's whitespace
			if len(l) == 0 {
				continue
			}
			if want := l[0] != '{' || !json.Valid(l); malformed[n] != want {
				t.Errorf("line %d %q: malformed = %v, want %v", n, l, malformed[n], want)
			}
		}
		again, _, _ := Parse("fuzz.ndjson", bytes.NewReader(src))
		if diff := cmp.Diff(turn, again); diff != "" {
			t.Errorf("Parse is not deterministic (-first +second):\n%s", diff)
		}
	})
}

// TestStringValueMatchesEncodingJSON checks the scanner's string decoding
// against encoding/json on escapes, surrogates and invalid UTF-8.
func TestStringValueMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, lit := range []string{
		`""`, `"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00 smile"`,
		`"\ud83d alone"`, `"\ude00 low alone"`, `"\ud83d\u0041"`, "\"bad \xff byte\"", `"é中"`, `"é\n after"`, "\"\xff\\n\"",
	} {
		var want string
		if err := json.Unmarshal([]byte(lit), &want); err != nil {
			t.Fatalf("json.Unmarshal(%s) error = %v", lit, err)
		}
		b := []byte(lit)
		sc := scanner{b: b}
		if err := sc.value(0); err != nil || sc.i != len(b) {
			t.Fatalf("scanner.value(%s) = %v at %d, want the whole literal scanned", lit, err, sc.i)
		}
		if got := stringValue(b, span{start: 0, end: len(b), kind: '"'}); got != want {
			t.Errorf("stringValue(%s) = %q, want %q", lit, got, want)
		}
	}
}

// TestScannerAgreesWithEncodingJSON checks the scanner accepts exactly the
// objects encoding/json accepts.
func TestScannerAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		`{}`, `{"a":[]}`, `{"a":[1,2.5,-0.1e+3,true,false,null,"x",{"b":{}}]}`, `{"a":1,}`, `{"a" 1}`,
		`{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":tru}`, `{"a":nul}`, `{"a":[1 2]}`, `{"a":"\u12"}`,
		"{\"a\":\"\x01\"}", `{"a":1}}`, `{1:2}`, `{"a":[}`, `{"a":{"b":1,"c":[{"d":"e"}]}}`, `{"a":0.0e-0}`,
	} {
		valid := json.Valid([]byte(src))
		turn, diags := parseString(t, src+"\n")
		gotValid := len(diags) == 0 && turn.Events[0].Type != TypeRaw
		if gotValid != valid {
			t.Errorf("Parse(%s) accepted = %v, want %v (diagnostics %v)", src, gotValid, valid, diags)
		}
	}
}

func TestParseDeepNestingDoesNotCrash(t *testing.T) {
	t.Parallel()
	src := `{"a":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}\n"
	turn, diags := parseString(t, src)
	if len(diags) != 1 || turn.Events[0].Type != TypeRaw {
		t.Errorf("Parse(deeply nested) = %v, %v, want one raw event and one warning", turn.Events, diags)
	}
}

// TestScannerStringsAtEveryOffset puts each special byte at every offset of
// the word-at-a-time string scan and compares with encoding/json.
func TestScannerStringsAtEveryOffset(t *testing.T) {
	t.Parallel()
	for _, special := range stringSpecials {
		for pos := range 20 {
			val := strings.Repeat("a", pos) + special + strings.Repeat("b", 20-pos)
			src := `{"type":"done","reply":"` + val + `"}`
			var want struct{ Reply string }
			wantErr := json.Unmarshal([]byte(src), &want) != nil
			got, diags := parseString(t, src+"\n")
			if gotErr := len(diags) > 0; gotErr != wantErr {
				t.Errorf("Parse(%q) malformed = %v, want %v (%v)", src, gotErr, wantErr, diags)
				continue
			}
			if !wantErr && got.Answer != want.Reply {
				t.Errorf("Parse(%q).Answer = %q, want %q", src, got.Answer, want.Reply)
			}
		}
	}
}

// stringSpecials are the bytes a string scan must stop at or decode, alone
// and in pairs within one word (the first must be found, not the second).
var stringSpecials = []string{`\"`, `\\`, `\n`, `\u00e9`, "\x01", "\x1f", "\x7f", "é", "\xff", `"`,
	"\x01\x1f", "é\x01", "\xff\\n", "é\\\"", `\\"`, "\x01\"", "中\\u00e9"}

// TestParseStreamedTextAtEveryOffset puts each special byte at every
// offset of two deltas' text: the streamed text and its length in runes are
// what encoding/json decodes.
func TestParseStreamedTextAtEveryOffset(t *testing.T) {
	t.Parallel()
	delta := func(text string) string {
		return `{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"` + text + `"}}}`
	}
	for _, special := range stringSpecials {
		for pos := range 20 {
			val := strings.Repeat("a", pos) + special + strings.Repeat("b", 20-pos)
			var want struct{ S string }
			if json.Unmarshal([]byte(`{"s":"`+val+`"}`), &want) != nil {
				continue // not a string: covered by TestScannerStringsAtEveryOffset
			}
			src := ndjson(delta(val), delta("tail é"), delta(val))
			got, diags := parseString(t, src)
			wantText := want.S + "tail é" + want.S
			if len(diags) != 0 || got.StreamedText != wantText || got.TextLen != utf8.RuneCountInString(wantText) {
				t.Errorf("Parse(%q) = text %q, text_len %d, %v; want %q, %d, no diagnostics",
					src, got.StreamedText, got.TextLen, diags, wantText, utf8.RuneCountInString(wantText))
			}
		}
	}
}

// TestParseWarningsCapped checks that a trace of many broken lines keeps
// every line as an event but reports at most MaxDiagnostics warnings and a
// count of the rest.
func TestParseWarningsCapped(t *testing.T) {
	t.Parallel()
	lines := func(n int) string { return strings.Repeat("not json\n", n) }
	tests := []struct {
		name       string
		trace      string
		wantEvents int
		wantLen    int
		wantLast   string
	}{
		{"at the cap", lines(MaxDiagnostics), MaxDiagnostics, MaxDiagnostics,
			fmt.Sprintf("t.ndjson:%d:1: warning: trace.malformed_line: not a JSON object; kept as a raw event", MaxDiagnostics)},
		{"far past the cap", lines(5000), 5000, MaxDiagnostics + 1,
			fmt.Sprintf("t.ndjson:%d: warning: diag.truncated: %d more warnings not shown", MaxDiagnostics, 5000-MaxDiagnostics)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			turn, diags := parseString(t, tt.trace)
			got := []any{len(turn.Events), len(diags), diags[len(diags)-1].String(), diags.HasErrors()}
			want := []any{tt.wantEvents, tt.wantLen, tt.wantLast, false}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Parse(%s) [events, diagnostics, last, has errors] (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestShortTraceEventsAtLength: a trace of at most smallTrace events keeps
// them in a slice of their length (never nil), holding what the same
// events read as the start of a longer trace (whose slice is not copied).
func TestShortTraceEventsAtLength(t *testing.T) {
	t.Parallel()
	kinds := []string{
		`{"type":"phase","phase":"skill_dispatch"}`,
		`{"type":"tool_call","name":"search","args":{"q":"x"}}`,
		`{"type":"final_answer","payload":{"message":"The release passes."}}`,
		`{"type":"text_delta","delta":"ok"}`,
	}
	for n := 0; n <= smallTrace+2; n++ {
		var lines []string
		for i := range n {
			lines = append(lines, kinds[i%len(kinds)])
		}
		short, _, err := Parse("t.ndjson", strings.NewReader(ndjson(append(lines, `{"type":"done","reply":"ok","finalized":true}`)...)))
		if err != nil {
			t.Fatal(err)
		}
		pad := append([]string(nil), lines...)
		for range smallTrace + 1 {
			pad = append(pad, `{"type":"phase","phase":"pad"}`)
		}
		long, _, err := Parse("t.ndjson", strings.NewReader(ndjson(append(pad, `{"type":"done","reply":"ok","finalized":true}`)...)))
		if err != nil {
			t.Fatal(err)
		}
		got := short.Events
		if got == nil || len(got) <= smallTrace && cap(got) != len(got) {
			t.Errorf("%d lines: events len %d cap %d (nil %v), want their length", n+1, len(got), cap(got), got == nil)
		}
		want := long.Events[:len(got)-1]
		if diff := cmp.Diff(want, got[:len(got)-1]); diff != "" {
			t.Errorf("%d lines: events differ from the same lines of a longer trace (-long +short):\n%s", n+1, diff)
		}
	}
}
