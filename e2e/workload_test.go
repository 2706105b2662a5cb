package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// workload is a generated pack and turns file: tasks spread over all six
// scorers, two CEL checks a task, and realistic harness traces.
type workload struct {
	Pack  string // pack file
	Turns string // turns file
	N     int    // turns in the turns file
}

// scorerTasks are the task shapes the generator cycles through, one per scorer.
var scorerTasks = []struct {
	scorer string
	kpis   string
}{
	{"task_state", "task_created: true\n      assigned_to: qa-release-lead\n      has_due_at: true\n      priority_min: 7\n      spec_keywords: [production, build, blocker]"},
	{"memory_grounding", "memory_tool_called: true\n      grounded_in_memory: true\n      answer_keywords: [harness, release]"},
	{"tool_sequence", "tool_sequence_contains: [company_task_list, validate-delivery]\n      tool_sequence_in_order: [company_task_list, validate-delivery]\n      no_hallucinated_tool_key: true"},
	{"stigmergic", "note_written: true\n      note_keywords: [blocker, owner]"},
	{"answer_keywords", "answer_keywords: [pass, fail, blocker]\n      min_answer_length: 80"},
	{"composite", "tool_sequence_contains: [validate-delivery]\n      answer_keywords: [pass, blocker]\n      min_answer_length: 60"},
}

// writePack writes a pack with n tasks.
func writePack(t testing.TB, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`schema_version: hsm.company_eval_pack.v1
company:
  id: bench-co
  name: Bench Co
  api_base: http://127.0.0.1:3847
personas: [cto, qa-release-lead, staff-engineer]
tool_catalog: [company_task_list, company_task_create, company_memory_search, validate-delivery, stigmergic_note, finalize_response]
tasks:
`)
	for i := 0; i < n; i++ {
		st := scorerTasks[i%len(scorerTasks)]
		fmt.Fprintf(&b, `  - label: t%05d
    persona: qa-release-lead
    prompt: generated task %d
    scorer: %s
    weight: %d
    slice_tags: [%s, s%d]
    kpis:
      %s
    safety:
      requires_human: false
      max_tool_calls: 40
    cel:
      - name: bounded_tools
        expr: size(turn.tool_calls) <= 30 && turn.finalized && !turn.error
        message: too many tool calls, or not finalized
      - name: answer_substance
        expr: keywords_ratio(turn.answer, ["pass", "blocker", "release"])
        weight: 0.5
`, i, i, st.scorer, 1+i%3, st.scorer, i%4, st.kpis)
	}
	b.WriteString(`scoring:
  process_weight: 0.35
  kpi_weight: 0.65
  min_mean_score: 0.5
  min_finalize_rate: 0.9
  max_error_rate: 0.1
  max_mean_latency_s: 90
  max_mean_cost_usd: 0.5
  pareto_filter: true
  promotion:
    require_no_regression: true
    shadow_runs: 1
    rollback_on: [quality_drop]
`)
	path := filepath.Join(dir, "pack.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeTrace writes a harness trace of about events lines; variant changes
// the tools and the answer a little so turns differ.
func writeTrace(t testing.TB, path string, events, variant int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	line := func(v any) {
		b, _ := json.Marshal(v)
		w.Write(b)
		w.WriteByte('\n')
	}
	line(map[string]any{"type": "phase", "phase": "skill_dispatch", "skill": "release-triage"})
	tools := []string{"company_task_list", "company_memory_search", "company_task_create", "stigmergic_note", "validate-delivery"}
	answer := "Release check: validate-delivery reports a pass for the API but a fail for the build; the blocker is the production build step. Owner: qa-release-lead. harness release"
	if variant%5 == 4 {
		answer = "Done."
	}
	nTools := 0
	for i := 0; i < events-6; i++ {
		switch i % 8 {
		case 0:
			line(map[string]any{"type": "runtime", "payload": map[string]any{"event_type": "loop_iteration", "iteration": i / 8}})
		case 1:
			if nTools < 20 {
				tool := tools[(i/8+variant)%len(tools)]
				line(map[string]any{"type": "runtime", "payload": map[string]any{"event_type": "tool_start", "tool_name": tool,
					"tool_input": map[string]any{"query": "release blocker", "limit": 10, "company_id": "bench-co"}}})
				line(map[string]any{"type": "runtime", "payload": map[string]any{"event_type": "tool_end", "tool_name": tool, "ok": true}})
				nTools++
				i++
			} else {
				line(map[string]any{"type": "runtime", "payload": map[string]any{"event_type": "heartbeat"}})
			}
		default:
			line(map[string]any{"type": "stream_event", "event": map[string]any{"type": "content_block_delta",
				"delta": map[string]any{"type": "text_delta", "text": "checking the release pipeline state "}}})
		}
	}
	line(map[string]any{"type": "runtime", "payload": map[string]any{"event_type": "tool_start", "tool_name": "validate-delivery", "tool_input": map[string]any{"target": "release"}}})
	line(map[string]any{"type": "runtime", "payload": map[string]any{"event_type": "tool_end", "tool_name": "validate-delivery"}})
	line(map[string]any{"type": "final_answer", "payload": map[string]any{"message": answer}})
	line(map[string]any{"type": "done", "reply": answer, "finalized": variant%7 != 6, "task_id": "T-1"})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// snapshot JSON for the state-aware scorers: before has a few tasks and
// memory entries; after adds a task with a context note.
func writeSnapshots(t testing.TB, dir string, tasks, memory int) (before, after string) {
	t.Helper()
	mk := func(extra bool) map[string]any {
		var ts []map[string]any
		for i := 0; i < tasks; i++ {
			ts = append(ts, map[string]any{"id": fmt.Sprintf("T-%d", i), "title": fmt.Sprintf("Existing task %d", i),
				"specification": "routine maintenance", "state": "open", "owner_persona": "staff-engineer",
				"priority": 3, "due_at": "", "created_at": "2026-11-01T09:00:00Z", "context_notes": []any{}})
		}
		if extra {
			ts = append(ts, map[string]any{"id": "T-new", "title": "Investigate production build blocker",
				"specification": "The production build fails; acceptance: green build", "state": "open",
				"owner_persona": "qa-release-lead", "checked_out_by": "", "priority": 8, "due_at": "2026-12-02T17:00:00Z",
				"created_at":    "2026-11-30T09:00:05Z",
				"context_notes": []map[string]any{{"at": "2026-11-30T09:00:06Z", "actor": "cto", "text": "blocker found; owner is qa"}}})
		}
		var mem []map[string]any
		for i := 0; i < memory; i++ {
			mem = append(mem, map[string]any{"id": fmt.Sprintf("M-%d", i), "scope": "company", "title": "Release pipeline notes",
				"body": fmt.Sprintf("The harness release pipeline validates delivery before production build %d", i),
				"tags": []string{"release"}, "kind": "note", "created_at": "2026-11-20T10:00:00Z"})
		}
		return map[string]any{"tasks": ts, "memory": mem, "captured_at": "2026-11-30T09:00:00Z"}
	}
	before, after = filepath.Join(dir, "before.json"), filepath.Join(dir, "after.json")
	for p, extra := range map[string]bool{before: false, after: true} {
		b, _ := json.Marshal(mk(extra))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return before, after
}

// makeWorkload writes a pack of tasks tasks and a turns file of
// candidates x tasks turns whose traces have about events lines each.
func makeWorkload(t testing.TB, dir string, tasks, candidates, events int) workload {
	t.Helper()
	packPath := writePack(t, dir, tasks)
	before, after := writeSnapshots(t, dir, 20, 50)
	const variants = 12
	for v := 0; v < variants; v++ {
		writeTrace(t, filepath.Join(dir, fmt.Sprintf("trace-%02d.ndjson", v)), events, v)
	}
	turnsPath := filepath.Join(dir, "turns.jsonl")
	f, err := os.Create(turnsPath)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	n := 0
	for c := 0; c < candidates; c++ {
		for i := 0; i < tasks; i++ {
			v := (i*7 + c) % variants
			turn := map[string]any{
				"label":        fmt.Sprintf("t%05d", i),
				"candidate":    fmt.Sprintf("cand-%03d", c),
				"latency_s":    10 + float64((i+c)%20),
				"cost_usd":     0.01 * float64(1+(i+c)%5),
				"started_at":   "2026-11-30T09:00:00Z",
				"finished_at":  "2026-11-30T09:00:30Z",
				"trace_file":   fmt.Sprintf("trace-%02d.ndjson", v),
				"state_before": before,
				"state_after":  after,
			}
			b, _ := json.Marshal(turn)
			w.Write(b)
			w.WriteByte('\n')
			n++
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return workload{Pack: packPath, Turns: turnsPath, N: n}
}

// TestWriteWorkload writes the benchmark workload to $ASSAY_WORKLOAD_DIR for
// profiling by hand (skipped otherwise):
//
//	ASSAY_WORKLOAD_DIR=/tmp/wl go test -run TestWriteWorkload ./e2e
//
// (ASSAY_WORKLOAD_TASKS, _CANDIDATES and _EVENTS change its size.)
//
//	ASSAY_CPUPROFILE=cpu.out bin/assay --plugin-dir bin/plugins --db /tmp/wl/a.db verify --pack /tmp/wl/pack.yaml --turns /tmp/wl/turns.jsonl
func TestWriteWorkload(t *testing.T) {
	dir := os.Getenv("ASSAY_WORKLOAD_DIR")
	if dir == "" {
		t.Skip("ASSAY_WORKLOAD_DIR is not set; nothing to write")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	size := func(name string, def int) int {
		if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
			return n
		}
		return def
	}
	w := makeWorkload(t, dir, size("ASSAY_WORKLOAD_TASKS", 1000), size("ASSAY_WORKLOAD_CANDIDATES", 10), size("ASSAY_WORKLOAD_EVENTS", 200))
	t.Logf("wrote %s and %s (%d turns)", w.Pack, w.Turns, w.N)
}
