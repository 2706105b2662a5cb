package verify

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Ingestion benchmark sizes (issue 20): 10,000 traces of 50 spans each
// (a root invoke_agent span, a chat span and 48 execute_tool spans), 20
// traces to an export request line.
const (
	benchTraces        = 10_000
	benchSpansPerTrace = 50
	benchTracesPerLine = 20
)

// writeOTLPBench writes the OTLP file of the ingestion benchmark.
func writeOTLPBench(tb testing.TB, path string, traces int) {
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	str := func(k, v string) string {
		b, _ := json.Marshal(v)
		return fmt.Sprintf(`{"key":%q,"value":{"stringValue":%s}}`, k, b)
	}
	out, _ := json.Marshal([]genAIMessage{{Role: "assistant", FinishReason: "stop"}})
	out = []byte(strings.Replace(string(out), `"parts":null`, `"parts":[{"type":"text","content":"Verdict: FAIL, the blocker is migration 0042."}]`, 1))
	for t := 0; t < traces; t++ {
		if t%benchTracesPerLine == 0 {
			w.WriteString(`{"resourceSpans":[{"resource":{"attributes":[` + str("assay.candidate", "bench") + `]},"scopeSpans":[{"spans":[`)
		} else {
			w.WriteString(",")
		}
		trace := fmt.Sprintf("%032x", t+1)
		root := fmt.Sprintf("%016x", 1)
		fmt.Fprintf(w, `{"traceId":%q,"spanId":%q,"name":"invoke_agent bot","startTimeUnixNano":"1000000000","endTimeUnixNano":"9000000000","attributes":[%s,%s,%s]}`,
			trace, root, str("gen_ai.operation.name", "invoke_agent"), str("assay.task.label", fmt.Sprintf("task_%05d", t)), str("gen_ai.output.messages", string(out)))
		fmt.Fprintf(w, `,{"traceId":%q,"spanId":%q,"parentSpanId":%q,"name":"chat model","startTimeUnixNano":"1100000000","endTimeUnixNano":"1200000000","attributes":[%s]}`,
			trace, fmt.Sprintf("%016x", 2), root, str("gen_ai.operation.name", "chat"))
		for s := 3; s <= benchSpansPerTrace; s++ {
			fmt.Fprintf(w, `,{"traceId":%q,"spanId":%q,"parentSpanId":%q,"name":"execute_tool t","startTimeUnixNano":"%d","endTimeUnixNano":"%d","attributes":[%s,%s,%s]}`,
				trace, fmt.Sprintf("%016x", s), root, 1_300_000_000+s*1000, 1_300_000_500+s*1000,
				str("gen_ai.operation.name", "execute_tool"), str("gen_ai.tool.name", fmt.Sprintf("tool_%d", s%7)),
				str("gen_ai.tool.call.arguments", fmt.Sprintf(`{"query":"item %d","limit":8}`, s)))
		}
		if t%benchTracesPerLine == benchTracesPerLine-1 || t == traces-1 {
			w.WriteString("]}]}]}\n")
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// writeTurnsEquivalent writes the turns file holding the same turns as the
// OTLP file: each turn's trace exactly as ReadOTLPFile gives it.
func writeTurnsEquivalent(tb testing.TB, otlpPath, path string) {
	inputs, _, err := ReadOTLPFile(otlpPath, OTLPOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for _, in := range inputs {
		for _, ts := range in.Turns {
			nd, _, _, err := ts.inline.load()
			if err != nil {
				tb.Fatal(err)
			}
			fmt.Fprintf(w, `{"candidate":%q,"label":%q,"latency_s":%v,"trace":[%s]}`+"\n", ts.Candidate, ts.Label, *ts.LatencyS,
				strings.Join(strings.Split(strings.TrimSuffix(string(nd), "\n"), "\n"), ","))
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// ingest reads every turn of inputs as the engine does before parsing.
func ingest(b *testing.B, inputs []*Input) int {
	n := 0
	for _, in := range inputs {
		for _, ts := range in.Turns {
			if _, _, _, err := ts.inline.load(); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	return n
}

// BenchmarkOTLPIngestion (issue 20): turns per second read from OTLP/JSON
// (10,000 traces of 50 spans) against --turns on the same turns, up to the
// trace bytes the engine parses; otlp/turns is the ratio of the rates.
func BenchmarkOTLPIngestion(b *testing.B) {
	dir := b.TempDir()
	otlpPath, turnsPath := filepath.Join(dir, "traces.jsonl"), filepath.Join(dir, "turns.jsonl")
	writeOTLPBench(b, otlpPath, benchTraces)
	writeTurnsEquivalent(b, otlpPath, turnsPath)
	var otlpTime, turnsTime time.Duration
	var turns int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		inputs, ds, err := ReadOTLPFile(otlpPath, OTLPOptions{})
		if err != nil || ds.HasErrors() {
			b.Fatal(err, ds)
		}
		turns = ingest(b, inputs)
		otlpTime += time.Since(start)

		start = time.Now()
		inputs, ds, err = ReadTurnsFile(turnsPath, "")
		if err != nil || ds.HasErrors() {
			b.Fatal(err, ds)
		}
		if n := ingest(b, inputs); n != turns {
			b.Fatalf("turns file has %d turns, OTLP %d", n, turns)
		}
		turnsTime += time.Since(start)
	}
	if turns != benchTraces {
		b.Fatalf("%d turns, want %d", turns, benchTraces)
	}
	otlpRate := float64(turns*b.N) / otlpTime.Seconds()
	turnsRate := float64(turns*b.N) / turnsTime.Seconds()
	b.ReportMetric(otlpRate, "otlp_turns/s")
	b.ReportMetric(turnsRate, "turns_turns/s")
	b.ReportMetric(otlpRate/turnsRate, "otlp/turns")
}
