package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNothingMissingGoesUnsaid covers issue 12 item 8: a turn results.json
// lists whose trace file is absent is a warning at its row naming the path
// and the nearest unlisted trace file.
func TestNothingMissingGoesUnsaid(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cand")
	results := filepath.Join(dir, "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(results, "task_a.ndjson"), `{"type":"done"}`+"\n")
	writeFile(t, filepath.Join(results, "task-b.ndjson"), `{"type":"done"}`+"\n")
	mpath := filepath.Join(dir, "results.json")
	writeFile(t, mpath, `[
  {"label": "task_a", "latency_s": 1},
  {"label": "task_b", "latency_s": 2},
  {"label": "zzz_unrelated"}
]`)
	in, diags, err := ReadRunDir(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range diags {
		got = append(got, d.String())
	}
	want := []string{
		mpath + `:3:13: warning: run.missing_trace: results.json lists turn "task_b", but its trace ` + filepath.Join(results, "task_b.ndjson") +
			` does not exist; the turn is not scored; did you mean "task-b" (` + filepath.Join(results, "task-b.ndjson") + `)?`,
		mpath + `:4:13: warning: run.missing_trace: results.json lists turn "zzz_unrelated", but its trace ` + filepath.Join(results, "zzz_unrelated.ndjson") +
			` does not exist; the turn is not scored`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadRunDir diagnostics (-want +got):\n%s", diff)
	}
	if len(in.Turns) != 2 || in.Turns[1].Label != "task_a" || in.Turns[1].LatencyS == nil || *in.Turns[1].LatencyS != 1 {
		t.Errorf("turns = %+v, want task-b and task_a with its latency", in.Turns)
	}
}

// TestUnknownLabelDidYouMean covers issue 12 item 8: a trace named for no
// task of the pack is a warning with its path and the nearest task label.
func TestUnknownLabelDidYouMean(t *testing.T) {
	l := newLocal()
	e, p := newEngine(t, l, nil)
	in := fixtureInput(p, "c", "good")
	in.Turns[0].Label = strings.ReplaceAll(in.Turns[0].Label, "_", "-") // task-create-release-blocker
	in.Turns[1].Label = "nothing_like_any_task"
	out, err := e.Verify(context.Background(), in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range out.Diagnostics {
		if d.Code == "run.unknown_label" {
			got = append(got, d.Pos.File+": "+d.Message)
		}
	}
	want := []string{
		in.Turns[0].TracePath + `: candidate c: turn "task-create-release-blocker" is not a task of pack ` + p.Name() + `; ignored; did you mean "task_create_release_blocker"?`,
		in.Turns[1].TracePath + `: candidate c: turn "nothing_like_any_task" is not a task of pack ` + p.Name() + `; ignored`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unknown-label warnings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"nothing_like_any_task", "task-create-release-blocker"}, out.Ignored); diff != "" {
		t.Errorf("Outcome.Ignored (-want +got):\n%s", diff)
	}
}

func TestNearestLabel(t *testing.T) {
	t.Parallel()
	labels := []string{"release_status_summary", "task_a", "task_b"}
	tests := []struct {
		label, want string
		ok          bool
	}{
		{"task-a", "task_a", true},
		{"task_c", "task_a", true}, // a tie goes to the smaller label
		{"release_status_sumary", "release_status_summary", true},
		{"xyz", "", false},
		{"release", "", false},
	}
	for _, tt := range tests {
		got, ok := nearestLabel(tt.label, labels)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("nearestLabel(%q) = %q, %t, want %q, %t", tt.label, got, ok, tt.want, tt.ok)
		}
	}
}

// TestReadRunDirMetricsPositions checks that every problem in results.json
// is at its value, through pkg/jsonpos.
func TestReadRunDirMetricsPositions(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"not an array", `{"label": "a"}`, []string{":1:1: run.metrics: results.json must be a JSON array of per-turn objects, got an object"}},
		{"syntax", "[\n  {\"label\": \"a\",}\n]", []string{":2:17: run.metrics: results.json must be a JSON array of per-turn objects: invalid character '}'"}},
		{"wrong type", "[\n  {\"label\": \"a\", \"latency_s\": \"slow\"}\n]", []string{":2:31: run.metrics: entry 0: latency_s: want a number, got string"}},
		{"row not an object", `[{"label": "a"}, 3]`, []string{":1:18: run.metrics: entry 1: want an object, got number"}},
		{"no label", `[{"persona": "p"}]`, []string{":1:2: run.metrics: entry 0 has no label"}},
		{"bad time", `[{"label": "a", "started_at": "noon"}]`, []string{`:1:31: run.metrics: entry 0: started_at: want an RFC 3339 time`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "results"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "results", "a.ndjson"), `{"type":"done"}`+"\n")
			writeFile(t, filepath.Join(dir, "results.json"), tt.src)
			_, diags, err := ReadRunDir(dir, "c")
			if err != nil {
				t.Fatal(err)
			}
			if len(diags) != len(tt.want) {
				t.Fatalf("ReadRunDir(%s) = %v, want %d diagnostics", tt.src, diags, len(tt.want))
			}
			for i, w := range tt.want {
				if got := diags[i].String(); !strings.Contains(got, filepath.Join(dir, "results.json")+w) {
					t.Errorf("ReadRunDir(%s) diagnostic %q, want %q", tt.src, got, w)
				}
			}
		})
	}
}

// TestReadTurnsFilePositions checks that a turns line's problems are at
// their value on the line, through pkg/jsonpos.
func TestReadTurnsFilePositions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "turns.jsonl")
	writeFile(t, path, `{"label":"d","trace":[],"latency_s":"slow"}
{"label":"e","trace":[]} x
{"label":"f","trace":[],"state_before":5}
{"label":"g","trace":[{"type":"done"}],"state_after":"after.json","extra":{"ignored":true}}
`)
	inputs, diags, err := ReadTurnsFile(path, "cand")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range diags {
		got = append(got, d.String())
	}
	want := []string{
		path + ":1:37: turns.field: not a valid turn: latency_s: want a number, got string",
		path + ":2:26: turns.syntax: not a valid turn: invalid character 'x' after top-level value",
		path + ":3:25: turns.field: state_before must be a snapshot object or a file path",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadTurnsFile diagnostics (-want +got):\n%s", diff)
	}
	if len(inputs) != 1 || len(inputs[0].Turns) != 1 || inputs[0].Turns[0].StateAfter.Path != filepath.Join(filepath.Dir(path), "after.json") {
		t.Fatalf("inputs = %+v, want turn g with its state_after path", inputs)
	}
}
