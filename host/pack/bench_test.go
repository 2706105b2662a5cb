package pack

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func BenchmarkLoadExamplePack(b *testing.B) {
	const file = "../../packs/example.yaml"
	opts := Options{Scorers: testCatalog()}
	EmbeddedSchema() // compiled once per process, not per load
	b.ReportAllocs()
	start, cpu := time.Now(), cpuTime()
	for b.Loop() {
		if p, list := Load(file, opts); p == nil {
			b.Fatalf("Load(%q) = %v", file, list)
		}
	}
	reportLoad(b, start, cpu)
}

// generatedPack writes a pack of n tasks cycling through the six scorers.
func generatedPack(n int) []byte {
	var sb strings.Builder
	sb.WriteString("schema_version: hsm.company_eval_pack.v1\ncompany:\n  id: gen\n  name: Generated\n  api_base: http://127.0.0.1:3847\n")
	sb.WriteString("personas: [cto, staff-engineer, qa-release-lead]\ntool_catalog: [search, validate-delivery, tag_release]\ntasks:\n")
	kpis := []string{
		"    scorer: task_state\n    kpis:\n      task_created: true\n      assigned_to: qa-release-lead\n      priority_min: 7\n      spec_keywords: [build, blocker]\n",
		"    scorer: memory_grounding\n    kpis:\n      memory_tool_called: true\n      grounded_in_memory: true\n      answer_keywords: [harness]\n",
		"    scorer: tool_sequence\n    kpis:\n      tool_sequence_contains: [search]\n      tool_args: {search: [query]}\n",
		"    scorer: stigmergic\n    kpis:\n      note_written: true\n      note_keywords: [next]\n",
		"    scorer: answer_keywords\n    kpis:\n      answer_keywords: [pass, fail]\n      min_answer_length: 80\n",
		"    scorer: composite\n    kpis:\n      tool_sequence_contains: [validate-delivery]\n      answer_keywords: [blocker]\n",
	}
	for i := range n {
		fmt.Fprintf(&sb, "  - label: task_%04d\n    persona: cto\n    prompt: >\n      Do task number %d and report back with the result.\n", i, i)
		sb.WriteString(kpis[i%len(kpis)])
		sb.WriteString("    weight: 1.5\n    slice_tags: [generated, bench]\n    safety:\n      requires_human: false\n      max_tool_calls: 8\n")
		sb.WriteString("    cel:\n      - name: few_tools\n        expr: size(turn.tool_calls) <= 8\n        message: too many tools\n")
	}
	sb.WriteString("scoring:\n  process_weight: 0.35\n  kpi_weight: 0.65\n  min_mean_score: 0.75\n  min_finalize_rate: 1.0\n  max_error_rate: 0.0\n  max_mean_latency_s: 90\n  max_mean_cost_usd: 0.5\n  pareto_filter: true\n  promotion:\n    require_no_regression: true\n    shadow_runs: 3\n    rollback_on: [quality_drop]\n")
	return []byte(sb.String())
}

func BenchmarkLoad1000TaskPack(b *testing.B) {
	file := b.TempDir() + "/gen.yaml"
	if err := os.WriteFile(file, generatedPack(1000), 0o644); err != nil {
		b.Fatal(err)
	}
	opts := Options{Scorers: testCatalog()}
	EmbeddedSchema()
	b.ReportAllocs()
	start, cpu := time.Now(), cpuTime()
	for b.Loop() {
		p, list := Load(file, opts)
		if p == nil || len(p.Tasks) != 1000 {
			b.Fatalf("Load(generated) = %v", list)
		}
	}
	reportLoad(b, start, cpu)
}

func TestGeneratedPackLoads(t *testing.T) {
	t.Parallel()
	p, list := Parse("gen.yaml", generatedPack(12), Options{Scorers: testCatalog()})
	if p == nil || len(p.Tasks) != 12 || len(list) != 0 {
		t.Fatalf("Parse(generated) = %v", list)
	}
}

// reportLoad reports the wall time per load (ms/load) and the CPU time per
// load (cpu-ms/load), which stays meaningful on a busy machine.
func reportLoad(b *testing.B, start time.Time, cpu time.Duration) {
	n := float64(b.N)
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/n, "ms/load")
	if c := cpuTime(); c > 0 {
		b.ReportMetric(float64((c-cpu).Microseconds())/1000/n, "cpu-ms/load")
	}
}
