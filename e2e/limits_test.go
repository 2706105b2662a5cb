package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/host/pack"
)

// The host's memory budget for one turn, whatever its size
// (docs/run-input.md, "Limits").
const maxPeakRSSMB = 300

const bigLabel = "task_create_release_blocker"

// peakRSS runs assay with args and returns how it ended and its peak
// resident memory in MB (runPeakRSS).
func peakRSS(t testing.TB, args ...string) (result, float64) {
	t.Helper()
	cmd := exec.Command(assay, append([]string{"--plugin-dir", pluginDir}, args...)...)
	cmd.Dir = root
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	peak, err := runPeakRSS(cmd)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running assay %s: %v", strings.Join(args, " "), err)
	}
	if peak == 0 {
		t.Skip("no /proc/PID/status VmHWM on this platform")
	}
	var cpu float64
	if ps := cmd.ProcessState; ps != nil {
		cpu = (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	return result{code: code, stdout: so.String(), stderr: se.String(), cpu: cpu}, float64(peak) / (1 << 20)
}

// writeLines writes n lines made by line(i) to path, buffered.
func writeLines(t testing.TB, path string, n int, line func(w *bufio.Writer, i int)) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		line(w, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// bigRun is a run directory with one turn of the fixture pack's
// bigLabel task: its trace written by trace, its after-snapshot of about
// snapshotBytes (none when zero).
func bigRun(t testing.TB, events int, toolCalls bool, snapshotBytes int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "big")
	for _, d := range []string{"results", "state"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeLines(t, filepath.Join(dir, "results", bigLabel+".ndjson"), events, func(w *bufio.Writer, i int) {
		switch {
		case i == events-1:
			w.WriteString(`{"type":"done","reply":"Created the release blocker task.","finalized":true}` + "\n")
		case toolCalls || i%1000 == 1:
			fmt.Fprintf(w, `{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"company_task_create","tool_input":{"title":"t%d"}}}`+"\n", i)
		default:
			fmt.Fprintf(w, `{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"w%d "}}}`+"\n", i)
		}
	})
	if snapshotBytes > 0 {
		writeSnapshot(t, filepath.Join(dir, "state", bigLabel+".after.json"), snapshotBytes)
	}
	return dir
}

// writeSnapshot writes a Company OS snapshot of about size bytes: tasks and
// memory entries like a real company's.
func writeSnapshot(t testing.TB, path string, size int) {
	t.Helper()
	const task = `{"id":"task-%d","title":"Investigate build failure %d","specification":"Investigate the nightly build failure on the arm64 runner and report back with acceptance criteria.","state":"open","owner_persona":"qa-release-lead","priority":7,"due_at":"2026-03-06T17:00:00Z","created_at":"2026-02-26T09:12:00Z","context_notes":[{"at":"2026-02-27T08:00:00Z","actor":"cto","text":"looked at the logs"}]}`
	n := size / (len(task) + 8)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(`{"captured_at":"2026-11-30T07:00:00Z","memory":[],"tasks":[`)
	for i := range n {
		if i > 0 {
			w.WriteByte(',')
		}
		fmt.Fprintf(w, task, i, i)
	}
	w.WriteString("]}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// verifyBig verifies a run directory of the fixture pack and returns how
// it ended and the host's peak RSS in MB.
func verifyBig(t testing.TB, dir string) (result, float64) {
	t.Helper()
	return peakRSS(t, "--db", filepath.Join(t.TempDir(), "assay.db"), "verify", "--pack", "testdata/fixtures/pack.yaml",
		"--run", dir, "--format", "json")
}

// TestBigInputsPeakRSS covers issue 14 item 5: a turn whose trace or
// snapshot is over a limit is refused with its error and the turn
// unscored (exit 2), a snapshot at the limit is scored, and in every case
// the host's peak RSS stays under maxPeakRSSMB. The traces here are a tenth
// of the 10-million-event ones `make bench` measures (BenchmarkPeakRSS*);
// memory does not grow with what is read past the limits.
func TestBigInputsPeakRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("writes about 200 MB of inputs")
	}
	tests := []struct {
		name      string
		events    int
		toolCalls bool
		snapshot  int
		wantCode  int
		wantDiag  string // in stderr
	}{
		{"1M events", 1_000_000, false, 0, 2, "trace.too_large: the trace has 1000000 events, over the limit of 250000 events per turn"},
		{"1M tool calls", 1_000_000, true, 0, 2, "trace.too_large: the trace has 999999 tool calls, over the limit of 10000 tool calls per turn"},
		{"snapshot over the limit", 10, false, 64 << 20, 2, "state.too_large: the state snapshot is"},
		{"snapshot at the limit", 10, false, 16<<20 - 64<<10, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, rss := verifyBig(t, bigRun(t, tt.events, tt.toolCalls, tt.snapshot))
			t.Logf("peak RSS %.0f MB", rss)
			if res.code != tt.wantCode || !strings.Contains(res.stderr, tt.wantDiag) {
				t.Errorf("assay verify = exit %d, stderr %q; want exit %d and %q", res.code, clip(res.stderr), tt.wantCode, tt.wantDiag)
			}
			if rss > maxPeakRSSMB {
				t.Errorf("assay verify peak RSS = %.0f MB, want at most %d MB", rss, maxPeakRSSMB)
			}
		})
	}
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

// largestPack writes the largest pack the size limit (pack.MaxSize) allows:
// tasks over all six scorers, each with a CEL check, up to just under it.
func largestPack(t testing.TB) string {
	t.Helper()
	const maxSize = pack.MaxSize
	var b strings.Builder
	b.WriteString("schema_version: hsm.company_eval_pack.v1\ncompany:\n  id: gen\n  name: Generated\n  api_base: http://127.0.0.1:3847\n")
	b.WriteString("personas: [cto, staff-engineer, qa-release-lead]\ntool_catalog: [search, validate-delivery, tag_release]\ntasks:\n")
	kpis := []string{
		"    scorer: task_state\n    kpis:\n      task_created: true\n      assigned_to: qa-release-lead\n      priority_min: 7\n      spec_keywords: [build, blocker]\n",
		"    scorer: memory_grounding\n    kpis:\n      memory_tool_called: true\n      grounded_in_memory: true\n      answer_keywords: [harness]\n",
		"    scorer: tool_sequence\n    kpis:\n      tool_sequence_contains: [search]\n      tool_args: {search: [query]}\n",
		"    scorer: stigmergic\n    kpis:\n      note_written: true\n      note_keywords: [next]\n",
		"    scorer: answer_keywords\n    kpis:\n      answer_keywords: [pass, fail]\n      min_answer_length: 80\n",
		"    scorer: composite\n    kpis:\n      tool_sequence_contains: [validate-delivery]\n      answer_keywords: [blocker]\n",
	}
	scoring := "scoring:\n  process_weight: 0.35\n  kpi_weight: 0.65\n  min_mean_score: 0.75\n  min_finalize_rate: 1.0\n  max_error_rate: 0.0\n  pareto_filter: true\n"
	for i := 0; ; i++ {
		var task strings.Builder
		fmt.Fprintf(&task, "  - label: task_%06d\n    persona: cto\n    prompt: >\n      Do task number %d and report back with the result.\n", i, i)
		task.WriteString(kpis[i%len(kpis)])
		task.WriteString("    weight: 1.5\n    slice_tags: [generated, bench]\n    safety:\n      requires_human: false\n      max_tool_calls: 8\n")
		task.WriteString("    cel:\n      - name: few_tools\n        expr: size(turn.tool_calls) <= 8\n        message: too many tools\n")
		if b.Len()+task.Len()+len(scoring) >= maxSize {
			break
		}
		b.WriteString(task.String())
	}
	b.WriteString(scoring)
	path := filepath.Join(t.TempDir(), "largest.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLargestPackPeakRSS covers issue 14 item 5: validating the largest
// pack the size limit allows stays under maxPeakRSSMB.
func TestLargestPackPeakRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("validates a pack at the size limit")
	}
	res, rss := peakRSS(t, "pack", "validate", largestPack(t))
	t.Logf("peak RSS %.0f MB", rss)
	if res.code != 0 {
		t.Errorf("assay pack validate = exit %d, stdout %q, stderr %q; want 0", res.code, clip(res.stdout), clip(res.stderr))
	}
	if rss > maxPeakRSSMB {
		t.Errorf("assay pack validate peak RSS = %.0f MB, want at most %d MB", rss, maxPeakRSSMB)
	}
}

// The numbers of issue 14 item 5, each the peak RSS of the assay process
// (run by `make bench`; each writes its input once, up to about 1 GB).

// BenchmarkPeakRSSTrace10MEvents verifies one turn whose trace has 10
// million events.
func BenchmarkPeakRSSTrace10MEvents(b *testing.B) {
	benchVerifyRSS(b, bigRun(b, 10_000_000, false, 0))
}

// BenchmarkPeakRSSTrace10MToolCalls verifies one turn whose trace has 10
// million tool calls.
func BenchmarkPeakRSSTrace10MToolCalls(b *testing.B) {
	benchVerifyRSS(b, bigRun(b, 10_000_000, true, 0))
}

// BenchmarkPeakRSSSnapshot247MB verifies one turn with a 247 MB snapshot.
func BenchmarkPeakRSSSnapshot247MB(b *testing.B) {
	benchVerifyRSS(b, bigRun(b, 10, false, 247_000_000))
}

// BenchmarkPeakRSSSnapshotAtLimit verifies one turn with a snapshot just
// under the limit (state.MaxFileSize), which is read and scored.
func BenchmarkPeakRSSSnapshotAtLimit(b *testing.B) {
	benchVerifyRSS(b, bigRun(b, 10, false, 16<<20-64<<10))
}

// BenchmarkPeakRSSLargestPack validates the largest pack the size limit allows.
func BenchmarkPeakRSSLargestPack(b *testing.B) {
	path := largestPack(b)
	b.ResetTimer()
	for range b.N {
		res, rss := peakRSS(b, "pack", "validate", path)
		if res.code != 0 {
			b.Fatalf("assay pack validate = exit %d: %s", res.code, clip(res.stdout))
		}
		b.ReportMetric(rss, "peak-RSS-MB")
	}
}

func benchVerifyRSS(b *testing.B, dir string) {
	b.ResetTimer()
	for range b.N {
		res, rss := verifyBig(b, dir)
		if res.code > 2 {
			b.Fatalf("assay verify = exit %d: %s", res.code, clip(res.stderr))
		}
		b.ReportMetric(rss, "peak-RSS-MB")
	}
}
