package verify

import (
	"path/filepath"
	"testing"
)

func BenchmarkLineRefLoad(b *testing.B) {
	line := `{"label":"t0000001","candidate":"c0001","latency_s":2,"trace":[{"type":"phase","phase":"skill_dispatch"},{"type":"final_answer","payload":{"message":"The release passes: 1 checks green."}},{"type":"done","reply":"ok","finalized":true}]}`
	path := filepath.Join(b.TempDir(), "t.jsonl")
	writeFile(&testing.T{}, path, line+"\n")
	l := &lineRef{path: path, n: len(line), file: &turnsFile{path: path}}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := l.load(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeTurnLine(b *testing.B) {
	line := []byte(`{"label":"t0000001","candidate":"c0001","latency_s":2,"trace":[{"type":"phase","phase":"skill_dispatch"},{"type":"final_answer","payload":{"message":"The release passes: 1 checks green."}},{"type":"done","reply":"ok","finalized":true}]}`)
	b.ReportAllocs()
	for b.Loop() {
		decodeTurnLine("t.jsonl", ".", 1, line, "d")
	}
}
