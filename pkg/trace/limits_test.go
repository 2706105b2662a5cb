package trace

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var defaultLimits = limits{events: MaxEvents, toolCalls: MaxToolCalls, bytes: MaxKeptBytes}

// TestTraceLimits covers issue 14 item 5: a trace over a limit keeps at
// most the limit, keeps counting, and says in one error which limit, by
// how much and from which line nothing was kept; under the limits nothing
// is said.
func TestTraceLimits(t *testing.T) {
	t.Parallel()
	phase := `{"type":"phase","phase":"plan"}` + "\n"
	tool := `{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"search","tool_input":{"q":"x"}}}` + "\n"
	delta := `{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"0123456789"}}}` + "\n"
	done := `{"type":"done","reply":"ok","finalized":true}` + "\n"
	lim := limits{events: 10, toolCalls: 3, bytes: 95}
	tests := []struct {
		name                string
		src                 string
		wantMsg             string // "" when within the limits
		wantEvents, wantTCs int
		wantToolEvents      int
		wantFinalized       bool
	}{
		{"within", strings.Repeat(phase, 9) + done, "", 10, 0, 0, true},
		{"events", strings.Repeat(phase, 25) + done,
			"limits.ndjson:11: trace.too_large: the trace has 26 events, over the limit of 10 events per turn; nothing from line 11 on was kept and the turn is not scored",
			10, 0, 0, true},
		{"tool calls", strings.Repeat(tool, 5) + done,
			"limits.ndjson:4: trace.too_large: the trace has 5 tool calls, over the limit of 3 tool calls per turn; nothing from line 4 on was kept and the turn is not scored",
			3, 3, 5, true},
		{"bytes", strings.Repeat(delta, 10),
			"limits.ndjson:10: trace.too_large: the trace has 100 bytes of text to keep (streamed text, messages, names, tool arguments), over the limit of 95 bytes per turn; nothing from line 10 on was kept and the turn is not scored",
			9, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			turn, diags, err := parse("limits.ndjson", strings.NewReader(tt.src), MaxLineBytes, lim)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			if errs := diags.Errors(); len(errs) > 0 {
				got = errs.Error()
			}
			if diff := cmp.Diff(tt.wantMsg, got); diff != "" {
				t.Errorf("parse errors (-want +got):\n%s", diff)
			}
			if len(turn.Events) != tt.wantEvents || len(turn.ToolCalls) != tt.wantTCs || turn.ToolEvents != tt.wantToolEvents ||
				turn.Finalized != tt.wantFinalized {
				t.Errorf("parse = %d events, %d tool calls, %d tool events, finalized %v; want %d, %d, %d, %v",
					len(turn.Events), len(turn.ToolCalls), turn.ToolEvents, turn.Finalized, tt.wantEvents, tt.wantTCs, tt.wantToolEvents, tt.wantFinalized)
			}
		})
	}
}

// TestTraceDefaultLimits checks the documented limits with a trace one
// event over MaxEvents.
func TestTraceDefaultLimits(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	for i := range MaxEvents + 1 {
		fmt.Fprintf(&b, `{"type":"phase","phase":"p%d"}`+"\n", i%7)
	}
	turn, diags, err := Parse("big.ndjson", &b)
	if err != nil {
		t.Fatal(err)
	}
	errs := diags.Errors()
	if len(errs) != 1 || errs[0].Code != CodeTooLarge || len(turn.Events) != MaxEvents || len(turn.Phases) != MaxEvents {
		t.Fatalf("Parse(%d events) = %d events kept, errors %v; want %d kept and one %s", MaxEvents+1, len(turn.Events), errs, MaxEvents, CodeTooLarge)
	}
}
