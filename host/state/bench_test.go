package state

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/assay-eval/assay/pkg/companyos"
)

// bigSnapshot is a snapshot of 5,000 tasks and 10,000 memory entries, the
// sizes the state-aware scorers are benchmarked at.
func bigSnapshot(b *testing.B) []byte {
	b.Helper()
	s := companyos.Snapshot{CapturedAt: "2026-11-30T07:00:00Z"}
	for i := range 5000 {
		p := float64(i % 10)
		s.Tasks = append(s.Tasks, companyos.Task{ID: fmt.Sprint(i), Title: fmt.Sprintf("Task %d", i),
			Specification: "Investigate the nightly build failure on the arm64 runner and report back.",
			State:         "open", OwnerPersona: "devops", Priority: &p, CreatedAt: "2026-11-30T06:00:00Z",
			ContextNotes: []companyos.Note{{At: "2026-11-30T06:30:00Z", Actor: "devops", Text: "looked at the logs"}}})
	}
	for i := range 10000 {
		s.Memory = append(s.Memory, companyos.MemoryEntry{ID: fmt.Sprint(i), Scope: "company", Title: fmt.Sprintf("Fact %d", i),
			Body: "The arm64 runner has a twenty gigabyte disk that fills up with build caches.",
			Tags: []string{"ci", "arm64"}, Kind: "fact", CreatedAt: "2026-11-01T00:00:00Z"})
	}
	src, err := json.Marshal(&s)
	if err != nil {
		b.Fatal(err)
	}
	return src
}

func BenchmarkParse(b *testing.B) {
	src := bigSnapshot(b)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if _, diags := Parse("big.json", src); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/parse")
}

// BenchmarkUnmarshal is the baseline: encoding/json into the model, without
// positions or diagnostics.
func BenchmarkUnmarshal(b *testing.B) {
	src := bigSnapshot(b)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		var s companyos.Snapshot
		if err := json.Unmarshal(src, &s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/parse")
}
