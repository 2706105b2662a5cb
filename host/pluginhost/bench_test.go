package pluginhost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/pkg/trace"
	"github.com/assay-eval/assay/plugins/toolsequence"
)

// BenchmarkColdStart measures a plugin's launch (sha256 check, exec,
// handshake on a private Unix socket) to its first Describe answer.
func BenchmarkColdStart(b *testing.B) {
	id := scorer.ID("test_env")
	if toolSequence {
		id = "tool_sequence"
	}
	var total time.Duration
	n := 0
	for b.Loop() {
		h := pluginhost.New(manifest())
		start := time.Now()
		if _, err := h.Describe(context.Background(), id); err != nil {
			b.Fatalf("Describe(%s) error = %v", id, err)
		}
		total += time.Since(start)
		n++
		b.StopTimer()
		h.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(n), "ms/start")
}

// benchCases builds n cases of 200-event turns (20 tool calls, streamed
// text, phases) with the five tool_sequence KPI keys set.
func benchCases(n int) []*scorer.Case {
	kpis := map[string]json.RawMessage{
		toolsequence.KeyContains:       json.RawMessage(`["search","create_task","memory_search"]`),
		toolsequence.KeyExact:          json.RawMessage(`["search","create_task"]`),
		toolsequence.KeyInOrder:        json.RawMessage(`["search","create_task"]`),
		toolsequence.KeyNoHallucinated: json.RawMessage(`true`),
		toolsequence.KeyArgs:           json.RawMessage(`{"search":["query"],"create_task":["title","owner"]}`),
	}
	tools := []string{"search", "memory_search", "create_task", "update_task"}
	cases := make([]*scorer.Case, n)
	for i := range cases {
		var t trace.Turn
		line := 0
		ev := func(e trace.Event) { line++; e.Line = line; t.Events = append(t.Events, e) }
		ev(trace.Event{Type: "phase", Phase: "skill_dispatch"})
		for k := 0; k < 20; k++ {
			name := tools[(i+k)%len(tools)]
			ev(trace.Event{Type: "runtime", EventType: "tool_start", ToolName: name})
			ev(trace.Event{Type: "runtime", EventType: "tool_end", ToolName: name})
			t.ToolCalls = append(t.ToolCalls, trace.ToolCall{Name: name, Args: map[string]any{
				"query": fmt.Sprintf("invoice %d", k), "limit": 10.0, "owner": "ops",
			}})
		}
		for len(t.Events) < 199 {
			ev(trace.Event{Type: "stream_event"})
		}
		ev(trace.Event{Type: "done"})
		t.ToolEvents = 40
		t.Answer = "I searched the invoices and created the follow-up task for the ops team."
		t.StreamedText = t.Answer
		t.TextLen = len(t.Answer)
		t.Finalized = true
		t.Phases = []string{"skill_dispatch"}
		cases[i] = &scorer.Case{
			ID:   fmt.Sprintf("turn-%d", i),
			Task: scorer.Task{Label: fmt.Sprintf("task-%d", i%20), Persona: "ops", KPIs: kpis, ToolCatalog: tools},
			Turn: t,
		}
	}
	return cases
}

// scoreAll scores cases in batches of batchSize, workers batches at a time,
// and fails on any unscored case.
func scoreAll(b *testing.B, h *pluginhost.Host, cases []*scorer.Case, batchSize, workers int) {
	batches := make(chan []*scorer.Case)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range batches {
				for _, o := range h.Score(context.Background(), "tool_sequence", batch) {
					if o.Err != nil {
						b.Errorf("Score(tool_sequence) error = %v", o.Err)
						return
					}
				}
			}
		}()
	}
	for i := 0; i < len(cases); i += batchSize {
		batches <- cases[i:min(i+batchSize, len(cases))]
	}
	close(batches)
	wg.Wait()
}

// BenchmarkScore1000 scores 1,000 turns with tool_sequence out-of-process
// (the real plugin binary) and in-process, 64 cases a batch, and reports
// both throughputs and their ratio.
func BenchmarkScore1000(b *testing.B) {
	if !toolSequence {
		b.Skip("plugins/toolsequence did not build")
	}
	const batchSize, workers = 64, 4
	cases := benchCases(1000)
	oop := pluginhost.New(manifest(), pluginhost.WithCallTimeout(time.Minute))
	defer oop.Close()
	inp := pluginhost.New(&pluginhost.Manifest{}, pluginhost.WithInProcess(toolsequence.New()))
	scoreAll(b, oop, cases[:batchSize], batchSize, 1) // launch outside the timing
	compareModes(b, oop, inp, len(cases), func(h *pluginhost.Host) { scoreAll(b, h, cases, batchSize, workers) })
}

// benchTraces renders n harness traces of 200 lines each (20 tool calls with
// arguments, streamed text, a final answer) as NDJSON.
func benchTraces(n int) [][]byte {
	tools := []string{"search", "memory_search", "create_task", "update_task"}
	out := make([][]byte, n)
	for i := range out {
		var buf []byte
		add := func(v any) {
			b, _ := json.Marshal(v)
			buf = append(append(buf, b...), '\n')
		}
		add(map[string]any{"type": "phase", "phase": "skill_dispatch"})
		lines := 1
		for k := 0; k < 20; k++ {
			name := tools[(i+k)%len(tools)]
			add(map[string]any{"type": "runtime", "payload": map[string]any{"event_type": "tool_start", "tool_name": name,
				"tool_input": map[string]any{"query": fmt.Sprintf("invoice %d", k), "limit": 10, "owner": "ops", "title": "t"}}})
			add(map[string]any{"type": "runtime", "payload": map[string]any{"event_type": "tool_end", "tool_name": name}})
			lines += 2
		}
		for ; lines < 198; lines++ {
			add(map[string]any{"type": "stream_event", "event": map[string]any{"type": "content_block_delta",
				"delta": map[string]any{"type": "text_delta", "text": "searching the invoices "}}})
		}
		add(map[string]any{"type": "final_answer", "payload": map[string]any{"message": "I searched the invoices and created the follow-up task."}})
		add(map[string]any{"type": "done", "reply": "done", "finalized": true})
		out[i] = buf
	}
	return out
}

// BenchmarkScore1000FromTraces is BenchmarkScore1000 for turns as the host
// gets them: each 200-event trace is parsed into its turn, then scored, 64 a
// batch, out-of-process and in-process.
func BenchmarkScore1000FromTraces(b *testing.B) {
	if !toolSequence {
		b.Skip("plugins/toolsequence did not build")
	}
	const batchSize, workers = 64, 4
	traces := benchTraces(1000)
	kpis := benchCases(1)[0].Task
	oop := pluginhost.New(manifest(), pluginhost.WithCallTimeout(time.Minute))
	defer oop.Close()
	inp := pluginhost.New(&pluginhost.Manifest{}, pluginhost.WithInProcess(toolsequence.New()))
	run := func(h *pluginhost.Host) {
		batches := make(chan [][]byte)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for batch := range batches {
					cases := make([]*scorer.Case, len(batch))
					for i, src := range batch {
						turn, _, err := trace.Parse("bench", bytes.NewReader(src))
						if err != nil {
							b.Error(err)
							return
						}
						cases[i] = &scorer.Case{ID: fmt.Sprint(i), Task: kpis, Turn: *turn}
					}
					for _, o := range h.Score(context.Background(), "tool_sequence", cases) {
						if o.Err != nil {
							b.Errorf("Score(tool_sequence) error = %v", o.Err)
							return
						}
					}
				}
			}()
		}
		for i := 0; i < len(traces); i += batchSize {
			batches <- traces[i:min(i+batchSize, len(traces))]
		}
		close(batches)
		wg.Wait()
	}
	run(oop) // launch outside the timing
	compareModes(b, oop, inp, len(traces), run)
}

// compareModes runs run (n turns) on the out-of-process host, then on the
// in-process one, b.N times, and reports both throughputs and their ratio,
// and CPU time (host and plugin, user + system) per 1,000 turns: out of
// process, the plugin process's part of it, and in process, with the
// in-process share of it — what the ratio is bound by on a machine whose
// cores are all busy.
func compareModes(b *testing.B, oop, inp *pluginhost.Host, n int, run func(*pluginhost.Host)) {
	var oopTime, inTime, oopCPU, pluginCPU, inCPU time.Duration
	for b.Loop() {
		pids := oop.PluginPIDs()
		self0, kids0 := cpuTime(pids)
		start := time.Now()
		run(oop)
		oopTime += time.Since(start)
		self1, kids1 := cpuTime(pids)
		start = time.Now()
		run(inp)
		inTime += time.Since(start)
		self2, _ := cpuTime(nil)
		oopCPU += self1 - self0 + kids1 - kids0
		pluginCPU += kids1 - kids0
		inCPU += self2 - self1
	}
	turns := float64(b.N * n)
	oopRate, inRate := turns/oopTime.Seconds(), turns/inTime.Seconds()
	b.ReportMetric(oopRate, "oop_turns/s")
	b.ReportMetric(inRate, "inproc_turns/s")
	b.ReportMetric(oopRate/inRate, "oop/inproc")
	b.ReportMetric(oopCPU.Seconds()*1000/turns*1000, "oop_cpu_ms/1k")
	b.ReportMetric(pluginCPU.Seconds()*1000/turns*1000, "plugin_cpu_ms/1k")
	b.ReportMetric(inCPU.Seconds()*1000/turns*1000, "inproc_cpu_ms/1k")
	b.ReportMetric(inCPU.Seconds()/oopCPU.Seconds(), "cpu_inproc/oop")
}
