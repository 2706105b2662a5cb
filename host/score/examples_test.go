package score

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/pkg/trace"
	"github.com/google/go-cmp/cmp"
)

// The example runs in examples/runs/ are verified against packs/example.yaml.
// These are the pack's tasks and scoring block, and the KPI score each turn
// is built to get from the built-in scorers (examples/runs/README.md shows
// the arithmetic); the host side (traces, process scores, host tags,
// summaries, gates, frontier) is checked here against the real files.
const examplesDir = "../../examples/runs"

type exampleTask struct {
	label     string
	weight    float64
	sliceTags []string
	maxTools  *int
}

var exampleTasks = []exampleTask{
	{"task_create_release_blocker", 1.25, []string{"task-write", "release", "governance"}, intp(8)},
	{"memory_grounded_recent_work", 1, []string{"memory", "grounding"}, nil},
	{"validate_delivery_tools", 1, []string{"tool-use", "qa"}, nil},
}

var exampleThresholds = Thresholds{MinMeanScore: 0.75, MinFinalizeRate: 1, MaxErrorRate: 0, MaxMeanLatencyS: f64(90)}

// exampleKPI is the KPI score each example turn is built to get.
var exampleKPI = map[string]map[string]float64{
	"candidate-a": {"task_create_release_blocker": 1, "memory_grounded_recent_work": 1, "validate_delivery_tools": 1},
	"candidate-b": {"task_create_release_blocker": 0, "memory_grounded_recent_work": 1, "validate_delivery_tools": 1},
	"candidate-c": {"task_create_release_blocker": 0.6, "memory_grounded_recent_work": 2.5 / 3, "validate_delivery_tools": 1},
}

type exampleMetrics struct {
	Label    string   `json:"label"`
	Persona  string   `json:"persona"`
	LatencyS *float64 `json:"latency_s"`
	CostUSD  *float64 `json:"cost_usd"`
}

func readSnapshot(t *testing.T, path string) *companyos.Snapshot {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s companyos.Snapshot
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("decoding snapshot %s: %v", path, err)
	}
	return &s
}

// exampleTurns reads one example candidate directory the way the host does
// and scores its turns with the expected KPI scores.
func exampleTurns(t *testing.T, cand string) ([]Turn, map[string]*trace.Turn) {
	t.Helper()
	dir := filepath.Join(examplesDir, cand)
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var metrics []exampleMetrics
	if err := json.Unmarshal(b, &metrics); err != nil {
		t.Fatalf("decoding %s/results.json: %v", dir, err)
	}
	byLabel := map[string]exampleMetrics{}
	for _, m := range metrics {
		byLabel[m.Label] = m
	}
	var turns []Turn
	traces := map[string]*trace.Turn{}
	for _, task := range exampleTasks {
		m, ok := byLabel[task.label]
		if !ok || m.LatencyS == nil || m.CostUSD == nil || m.Persona == "" {
			t.Fatalf("%s/results.json: no complete metrics for %s", dir, task.label)
		}
		path := filepath.Join(dir, "results", task.label+".ndjson")
		tr, diags, err := trace.ParseFile(path)
		if err != nil || len(diags) != 0 {
			t.Fatalf("trace.ParseFile(%s) = %v, %v; want no error and no diagnostics", path, diags, err)
		}
		traces[task.label] = tr
		before := readSnapshot(t, filepath.Join(dir, "state", task.label+".before.json"))
		after := readSnapshot(t, filepath.Join(dir, "state", task.label+".after.json"))
		if len(before.Memory) == 0 || len(after.Tasks) < len(before.Tasks) {
			t.Errorf("%s snapshots: %d memory entries before, tasks %d -> %d; want memory and no lost task",
				task.label, len(before.Memory), len(before.Tasks), len(after.Tasks))
		}
		process := trace.ProcessScore(tr)
		kpi := exampleKPI[cand][task.label]
		turns = append(turns, Turn{
			Label: task.label, Persona: m.Persona, Weight: task.weight, SliceTags: task.sliceTags, Status: StatusScored,
			ProcessScore: process, KPIScore: kpi, TurnScore: TurnScore(0.35, 0.65, process, kpi),
			Finalized: tr.Finalized, Error: tr.Error, LatencyS: m.LatencyS, CostUSD: m.CostUSD, ToolCalls: len(tr.ToolCalls),
			FailureTags: HostFailureTags(TagInput{Turn: tr, LatencyS: m.LatencyS, MaxMeanLatencyS: exampleThresholds.MaxMeanLatencyS, MaxToolCalls: task.maxTools}),
		})
	}
	return turns, traces
}

// TestExampleTracesParseClean parses every example trace: no diagnostic at all.
func TestExampleTracesParseClean(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join(examplesDir, "*", "results", "*.ndjson"))
	if err != nil || len(paths) < 9 {
		t.Fatalf("filepath.Glob(example traces) = %d paths, %v; want at least 9", len(paths), err)
	}
	for _, p := range paths {
		tr, diags, err := trace.ParseFile(p)
		if err != nil || len(diags) != 0 {
			t.Errorf("trace.ParseFile(%s) = %v, %v; want no error and no diagnostics", p, diags, err)
			continue
		}
		if len(tr.Events) < 10 || len(tr.Phases) == 0 || tr.LoopIters == 0 || len(tr.ToolCalls) == 0 || tr.StreamedText == "" {
			t.Errorf("trace.ParseFile(%s): %d events, phases %v, %d loop iterations, %d tool calls, streamed %q; want a realistic harness trace",
				p, len(tr.Events), tr.Phases, tr.LoopIters, len(tr.ToolCalls), tr.StreamedText)
		}
	}
}

func TestExamplePackLabels(t *testing.T) {
	b, err := os.ReadFile("../../packs/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range exampleTasks {
		if !strings.Contains(string(b), "label: "+task.label) {
			t.Errorf("packs/example.yaml has no task %s", task.label)
		}
	}
}

func TestExampleRuns(t *testing.T) {
	t.Parallel()
	wantProcess := map[string][]float64{
		"candidate-a": {1, 1, 1},
		"candidate-b": {0.35, 1, 1}, // the task turn errored and never finalized
		"candidate-c": {1, 1, 1},
	}
	wantTags := map[string][][]string{
		"candidate-a": {{}, {}, {}},
		"candidate-b": {{TagFinalizeMissing}, {}, {TagLatencyOverBudget}},
		"candidate-c": {{}, {}, {}},
	}
	wantSummary := map[string]Summary{
		"candidate-a": {
			N: 3, MeanScore: 1, FinalizeRate: 1, ErrorRate: 0,
			MeanLatencyS: f64(41.733333333), MeanToolCalls: 2, MeanCostUSD: f64(0.067333333),
			Gates: Gates{Passed: true, Failed: []GateFailure{}}, Eligible: true,
		},
		"candidate-b": {
			N: 3, MeanScore: 0.6625, FinalizeRate: 0.666666667, ErrorRate: 0.333333333, // (1.25·0.1225 + 1 + 1)/3.25
			MeanLatencyS: f64(78.866666667), MeanToolCalls: 1.333333333, MeanCostUSD: f64(0.069333333),
			Gates: Gates{Failed: []GateFailure{
				{Gate: GateMinMeanScore, Value: 0.6625, Threshold: 0.75},
				{Gate: GateMinFinalizeRate, Value: 0.666666667, Threshold: 1},
				{Gate: GateMaxErrorRate, Value: 0.333333333, Threshold: 0},
			}},
		},
		"candidate-c": {
			N: 3, MeanScore: 0.866666667, FinalizeRate: 1, ErrorRate: 0, // (1.25·0.74 + 0.891666667 + 1)/3.25
			MeanLatencyS: f64(17.633333333), MeanToolCalls: 1, MeanCostUSD: f64(0.017666667),
			Gates: Gates{Passed: true, Failed: []GateFailure{}}, Eligible: true,
		},
	}
	var sums []Summary
	for _, cand := range []string{"candidate-a", "candidate-b", "candidate-c"} {
		turns, _ := exampleTurns(t, cand)
		for i, tr := range turns {
			if tr.ProcessScore != wantProcess[cand][i] {
				t.Errorf("%s %s: process score = %v, want %v", cand, tr.Label, tr.ProcessScore, wantProcess[cand][i])
			}
			if diff := cmp.Diff(wantTags[cand][i], tr.FailureTags); diff != "" {
				t.Errorf("%s %s: host failure tags mismatch (-want +got):\n%s", cand, tr.Label, diff)
			}
		}
		got := Summarize(cand, turns, exampleThresholds)
		sums = append(sums, got)
		want := wantSummary[cand]
		want.Candidate = cand
		// Slices and tags are covered above and in TestSummarize.
		got.Slices, got.FailureTags = nil, nil
		if diff := cmp.Diff(want, got, approx, noStats); diff != "" {
			t.Errorf("Summarize(%s) mismatch (-want +got):\n%s", cand, diff)
		}
	}
	if diff := cmp.Diff([]string{"candidate-a", "candidate-c"}, Frontier(sums)); diff != "" {
		t.Errorf("Frontier(examples) mismatch (-want +got):\n%s", diff)
	}
}
