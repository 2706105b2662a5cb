package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"

	"github.com/assay-eval/assay/pkg/trace"
)

// benchTrace is a 200-event trace shaped like the e2e workload's.
func benchTrace() []byte {
	var b bytes.Buffer
	for i := range 200 {
		var v any
		switch i % 8 {
		case 0:
			v = map[string]any{"type": "runtime", "payload": map[string]any{"event_type": "loop_iteration", "iteration": i / 8}}
		case 1:
			v = map[string]any{"type": "runtime", "payload": map[string]any{"event_type": "tool_start", "tool_name": fmt.Sprintf("tool_%d", i%5),
				"tool_input": map[string]any{"query": "release blocker", "limit": 10, "company_id": "bench-co"}}}
		default:
			v = map[string]any{"type": "stream_event", "event": map[string]any{"type": "content_block_delta",
				"delta": map[string]any{"type": "text_delta", "text": "checking the release pipeline state "}}}
		}
		line, _ := json.Marshal(v)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// BenchmarkTraceEvidence parses a 200-event trace alone, hashed, and
// hashed and compressed (what verify does for a trace it records), and
// reports the stored bytes.
func BenchmarkTraceEvidence(b *testing.B) {
	src := benchTrace()
	e := &Engine{}
	for _, mode := range []string{"parse", "parse+hash", "parse+hash+gzip"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			var stored int
			cpu0 := cpuTime()
			defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu_ns/op") }()
			for i := 0; i < b.N; i++ {
				if mode == "parse" {
					if _, _, err := trace.Parse("t", bytes.NewReader(src)); err != nil {
						b.Fatal(err)
					}
					continue
				}
				tee := e.newEvidenceTee(bytes.NewReader(src), mode == "parse+hash+gzip")
				if _, _, err := trace.Parse("t", tee); err != nil {
					b.Fatal(err)
				}
				_, blob, err := tee.finish("trace")
				if err != nil {
					b.Fatal(err)
				}
				if blob != nil {
					stored = len(blob.Data)
				}
			}
			if stored > 0 {
				b.ReportMetric(float64(len(src)), "raw_B")
				b.ReportMetric(float64(stored), "stored_B")
			}
		})
	}
}

// cpuTime is the process's user and system CPU time in nanoseconds: less
// sensitive than wall time to other processes on a shared machine.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
