package trace

import (
	"bytes"
	"fmt"
	"testing"
)

// benchTrace builds a realistic harness trace of about n events: a skill
// dispatch, loop iterations, tool calls with inputs and results, streamed
// text deltas, a final answer and done.
func benchTrace(n int) []byte {
	var b bytes.Buffer
	ts := 1764486000.0
	line := func(format string, args ...any) {
		ts += 0.137
		fmt.Fprintf(&b, `{"ts":%.3f,"session_id":"sess-7f3a9c","type":`, ts)
		fmt.Fprintf(&b, format, args...)
		b.WriteString("}\n")
	}
	line(`"phase","phase":"skill_dispatch","skill":"company_tasks","confidence":0.91`)
	events := 1
	for i := 0; events < n-3; i++ {
		switch {
		case i%12 == 0:
			line(`"runtime","payload":{"event_type":"loop_iteration","iteration":%d,"model":"claude-sonnet"}`, i/12+1)
			events++
		case i%12 == 1:
			line(`"runtime","payload":{"event_type":"tool_start","tool_name":"company_memory_search","tool_use_id":"toolu_%04d","tool_input":{"query":"release blockers production build","limit":10,"scope":"company"}}`, i)
			line(`"runtime","payload":{"event_type":"tool_end","tool_name":"company_memory_search","tool_use_id":"toolu_%04d","duration_ms":412,"result":{"entries":[{"id":"mem-%d","title":"Harness refactor","summary":"Moved the meta-harness scorer into Company OS; traces are NDJSON."},{"id":"mem-%d","title":"Release checklist","summary":"Production build must pass validate-delivery before the release train."}]}}`, i, i, i+1)
			events += 2
		default:
			line(`"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The production build is blocked by a failing migration step %d; "}}`, i)
			events++
		}
	}
	line(`"runtime","payload":{"event_type":"tool_end","tool_name":"finalize_response"}`)
	line(`"final_answer","payload":{"message":"The production build is blocked by a failing migration; I created a release blocker task for qa-release-lead with acceptance criteria and a due date."}`)
	line(`"done","reply":"Created the release blocker task.","finalized":true,"task_id":"task-1842","task_action":"create"`)
	return b.Bytes()
}

func BenchmarkParse(b *testing.B) {
	src := benchTrace(200)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := Parse("bench.ndjson", bytes.NewReader(src)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(len(src))*float64(b.N)/s/1e6, "MB/s")
	}
}

func TestBenchTraceIsClean(t *testing.T) {
	src := benchTrace(200)
	turn, diags, err := Parse("bench.ndjson", bytes.NewReader(src))
	if err != nil || len(diags) != 0 {
		t.Fatalf("Parse(benchTrace(200)) = %v, %v, want no diagnostics", diags, err)
	}
	if len(turn.Events) != 200 || !turn.Finalized || ProcessScore(turn) != 0.9 {
		t.Errorf("Parse(benchTrace(200)) = %d events, finalized %v, process %v; want 200, true, 0.9",
			len(turn.Events), turn.Finalized, ProcessScore(turn))
	}
}
