package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/host/store/storetest"
)

// answerPack writes a pack of n answer_keywords tasks with one CEL check
// each (about 250 bytes a task: 2.5 MB at 10,000), the pack issue 16's
// pack targets are measured on (docs/performance.md).
func answerPack(t testing.TB, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("schema_version: hsm.company_eval_pack.v1\ncompany:\n  id: gen\n  name: Generated\n  api_base: http://127.0.0.1:3847\n")
	b.WriteString("personas: [cto]\ntool_catalog: [search]\ntasks:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - label: t%07d\n    persona: cto\n    prompt: >\n      Answer question number %d and say whether the release passes.\n", i, i)
		b.WriteString("    scorer: answer_keywords\n    kpis:\n      answer_keywords: [release, pass]\n    weight: 1\n")
		b.WriteString("    cel:\n      - name: finalized\n        expr: turn.finalized && !turn.error\n        message: not finalized\n")
	}
	b.WriteString("scoring:\n  process_weight: 0.35\n  kpi_weight: 0.65\n  min_mean_score: 0.5\n  min_finalize_rate: 1.0\n  max_error_rate: 0.0\n  pareto_filter: true\n")
	path := filepath.Join(dir, "answers.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// answerTurns writes candidates × tasks one-turn answers of answerPack as
// a turns file (inline three-event traces).
func answerTurns(t testing.TB, dir string, tasks, candidates int) string {
	t.Helper()
	path := filepath.Join(dir, "answers.jsonl")
	writeLines(t, path, tasks*candidates, func(w *bufio.Writer, i int) {
		fmt.Fprintf(w, `{"label":"t%07d","candidate":"c%04d","latency_s":2,"trace":[`+
			`{"type":"phase","phase":"skill_dispatch"},`+
			`{"type":"final_answer","payload":{"message":"The release passes: %d checks green."}},`+
			`{"type":"done","reply":"ok","finalized":true}]}`+"\n", i%tasks, i/tasks, i)
	})
	return path
}

// BenchmarkPackValidate10k validates a 10,000-task pack (one scorer and one
// CEL check a task) and reports the child's wall time and peak RSS.
func BenchmarkPackValidate10k(b *testing.B) {
	path := answerPack(b, b.TempDir(), 10_000)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res, rss := peakRSS(b, "pack", "validate", path)
		d := time.Since(start)
		if res.code != 0 {
			b.Fatalf("assay pack validate = exit %d: %s", res.code, clip(res.stdout))
		}
		b.ReportMetric(d.Seconds(), "s/validate")
		b.ReportMetric(rss, "peak-RSS-MB")
	}
}

// verifyAnswers verifies candidates × tasks one-turn answers on SQLite (or
// the database db names) and reports wall time, time per turn and peak RSS.
func verifyAnswers(b *testing.B, tasks, candidates int, db func() string) {
	dir := b.TempDir()
	packPath, turns := answerPack(b, dir, tasks), answerTurns(b, dir, tasks, candidates)
	n := tasks * candidates
	b.ResetTimer()
	for range b.N {
		dbURL := db() // a fresh database or schema: setup, not the verify's time
		start := time.Now()
		res, rss := peakRSS(b, "--db", dbURL, "verify", "--pack", packPath, "--turns", turns, "--format", "json")
		d := time.Since(start)
		if res.code > 1 {
			b.Fatalf("assay verify = exit %d: %s", res.code, clip(res.stderr))
		}
		b.ReportMetric(d.Seconds(), "s/verify")
		b.ReportMetric(float64(d.Microseconds())/float64(n), "µs/turn")
		b.ReportMetric(rss, "peak-RSS-MB")
		b.ReportMetric(res.cpu/float64(n)*1e6, "cpu-µs/turn")
	}
}

func sqliteDB(b *testing.B) func() string {
	return func() string { return filepath.Join(b.TempDir(), "assay.db") }
}

// BenchmarkVerifyAnswers10k verifies 10,000 one-turn answers against the
// 10,000-task pack (answer keywords and one CEL check, SQLite).
func BenchmarkVerifyAnswers10k(b *testing.B) { verifyAnswers(b, 10_000, 1, sqliteDB(b)) }

// BenchmarkVerifyFlat10k, 100k and 1M verify one-turn answers of a
// 1,000-task pack by 10, 100 and 1,000 candidates: memory must not grow
// with the run and time per turn must stay linear. 1M runs only with
// ASSAY_BENCH_1M set (it takes minutes).
func BenchmarkVerifyFlat10k(b *testing.B) { verifyAnswers(b, 1000, 10, sqliteDB(b)) }
func BenchmarkVerifyFlat100k(b *testing.B) {
	if os.Getenv("ASSAY_BENCH_SHORT") != "" {
		b.Skip("ASSAY_BENCH_SHORT is set")
	}
	verifyAnswers(b, 1000, 100, sqliteDB(b))
}
func BenchmarkVerifyFlat1M(b *testing.B) {
	if os.Getenv("ASSAY_BENCH_1M") == "" {
		b.Skip("set ASSAY_BENCH_1M=1 to verify 1,000,000 turns")
	}
	verifyAnswers(b, 1000, 1000, sqliteDB(b))
}

// BenchmarkVerifyAnswers10kPostgres is BenchmarkVerifyAnswers10k on
// Postgres (ASSAY_TEST_POSTGRES_URL), each run in a fresh database.
func BenchmarkVerifyAnswers10kPostgres(b *testing.B) {
	verifyAnswers(b, 10_000, 1, func() string { return storetest.Postgres(b) })
}
