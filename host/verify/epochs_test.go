package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/store"
)

// TestRunDirEpochs (issue 19 item 1): results/<label>.<epoch>.ndjson are
// the epochs of a task; results.json rows carry "epoch"; a shared
// state/<label>.before.json serves every epoch, an after snapshot only its
// own epoch (or epoch 1); a name whose whole stem is a task is that task.
func TestRunDirEpochs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cand")
	results, state := filepath.Join(dir, "results"), filepath.Join(dir, "state")
	for _, d := range []string{results, state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a.1", "a.2", "b", "v1.2"} {
		writeFile(t, filepath.Join(results, name+".ndjson"), `{"type":"done"}`+"\n")
	}
	for _, name := range []string{"a.before", "a.after", "a.2.after"} {
		writeFile(t, filepath.Join(state, name+".json"), `{}`)
	}
	writeFile(t, filepath.Join(dir, "results.json"), `[{"label": "a", "epoch": 2, "latency_s": 2}, {"label": "a", "latency_s": 1}]`)
	in, diags, err := ReadRunDirTasks(dir, "", func(l string) bool { return l == "v1.2" })
	if err != nil || len(diags) != 0 {
		t.Fatalf("ReadRunDirTasks = %v, %v", diags, err)
	}
	type turn struct {
		Label         string
		Epoch         int
		Latency       float64
		Before, After string
	}
	var got []turn
	for _, ts := range in.Turns {
		tr := turn{Label: ts.Label, Epoch: ts.Epoch, Before: filepath.Base(ts.StateBefore.Path), After: filepath.Base(ts.StateAfter.Path)}
		if ts.LatencyS != nil {
			tr.Latency = *ts.LatencyS
		}
		got = append(got, tr)
	}
	want := []turn{
		{"a", 1, 1, "a.before.json", "a.after.json"},
		{"a", 2, 2, "a.before.json", "a.2.after.json"},
		{"b", 1, 0, ".", "."},
		{"v1.2", 1, 0, ".", "."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadRunDirTasks turns (-want +got):\n%s", diff)
	}

	// Without the pack's labels, v1.2 is epoch 2 of v1.
	in, _, _ = ReadRunDir(dir, "")
	if last := in.Turns[len(in.Turns)-1]; last.Label != "v1" || last.Epoch != 2 {
		t.Errorf("ReadRunDir: last turn %s epoch %d, want v1 epoch 2", last.Label, last.Epoch)
	}

	// Two traces of one epoch, and epoch 0, are errors at the file.
	writeFile(t, filepath.Join(results, "a.ndjson"), `{"type":"done"}`+"\n")
	writeFile(t, filepath.Join(results, "b.0.ndjson"), `{"type":"done"}`+"\n")
	writeFile(t, filepath.Join(dir, "results.json"), `[{"label": "a", "epoch": 0}]`)
	_, diags, err = ReadRunDir(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, d := range diags.Errors() {
		codes = append(codes, d.Code)
	}
	if diff := cmp.Diff([]string{codeRunEpoch, codeRunEpoch, codeRunMetrics}, codes); diff != "" {
		t.Errorf("ReadRunDir error codes (-want +got):\n%s\n%s", diff, diags)
	}
}

// TestTurnsFileEpochs (issue 19 item 1): "epoch" on a turns line; a
// repeated (candidate, label, epoch) and a bad epoch are exit-2 errors at
// their line.
func TestTurnsFileEpochs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "turns.jsonl")
	lines := []string{
		`{"label": "a", "candidate": "c", "trace": []}`,
		`{"label": "a", "candidate": "c", "epoch": 2, "trace": []}`,
		`{"label": "a", "candidate": "c", "epoch": 2, "trace": []}`,
		`{"label": "a", "candidate": "c", "epoch": 1, "trace": []}`,
		`{"label": "a", "candidate": "d", "epoch": 2, "trace": []}`,
		`{"label": "b", "candidate": "c", "epoch": 0, "trace": []}`,
		`{"label": "b", "candidate": "c", "epoch": 1.5, "trace": []}`,
	}
	writeFile(t, path, strings.Join(lines, "\n")+"\n")
	ins, diags, err := ReadTurnsFile(path, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range diags {
		got = append(got, d.Pos.String()+" "+d.Code)
	}
	want := []string{
		path + ":3:1 " + codeTurnsLabel,
		path + ":4:1 " + codeTurnsLabel,
		path + ":6:34 " + codeTurnsField,
		path + ":7:34 " + codeTurnsField,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadTurnsFile diagnostics (-want +got):\n%s\n%s", diff, diags)
	}
	if !strings.Contains(diags[0].Message, `already has a turn for "a" in epoch 2 (line 2)`) {
		t.Errorf("duplicate epoch message = %q, want it to name the epoch and the first line", diags[0].Message)
	}
	if len(ins) != 2 || len(ins[0].Turns) != 2 || ins[0].Turns[1].Epoch != 2 || ins[1].Turns[0].Epoch != 2 {
		t.Errorf("inputs = %+v, want c with epochs 1 and 2, d with epoch 2", ins)
	}
}

// TestVerifyEpochs (issue 19 items 1 and 2): every epoch is scored and
// recorded under (label, epoch), in pack order then epoch; the summary
// averages epochs per task; a rerun reuses every epoch.
func TestVerifyEpochs(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "assay.db"))
	l := newLocal()
	e, p := newEngine(t, l, st)
	in := fixtureInput(p, "c", "good")
	bad := fixtureInput(p, "c", "bad")
	for i := range bad.Turns {
		bad.Turns[i].Epoch = 2
	}
	in.Turns = append(in.Turns, bad.Turns...)
	out, err := e.Verify(ctx, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 2*len(p.Tasks) {
		t.Fatalf("%d results, want %d", len(out.Results), 2*len(p.Tasks))
	}
	for i, r := range out.Results {
		if want := p.Tasks[i/2].Label; r.Label != want || r.Epoch != i%2+1 {
			t.Errorf("result %d = %s epoch %d, want %s epoch %d", i, r.Label, r.Epoch, want, i%2+1)
		}
	}
	good, err := e.Verify(ctx, fixtureInput(p, "g", "good"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	worse, err := e.Verify(ctx, fixtureInput(p, "b", "bad"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// With equal task weights or not, the task mean is the mean of the two
	// epochs, so the candidate's mean is the mean of the two one-epoch means.
	mean := (good.Summary.MeanScore + worse.Summary.MeanScore) / 2
	if d := out.Summary.MeanScore - mean; d > 1e-9 || d < -1e-9 {
		t.Errorf("mean_score = %v, want %v (the mean of the epochs' means)", out.Summary.MeanScore, mean)
	}
	if out.Summary.Epochs != 2 || out.Summary.EpochsMin != 2 || len(out.Summary.PassHatK) != 2 {
		t.Errorf("epochs %d..%d pass^k %v, want 2..2 and k = 1, 2", out.Summary.EpochsMin, out.Summary.Epochs, out.Summary.PassHatK)
	}
	rows, err := st.TurnsDone(ctx, out.RunID, out.Attempt)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rows[store.TurnKey{Label: p.Tasks[0].Label, Epoch: 2}]; !ok || len(rows) != 2*len(p.Tasks) {
		t.Errorf("recorded %d turns, want %d with epoch 2 of %s", len(rows), 2*len(p.Tasks), p.Tasks[0].Label)
	}
	again, err := e.Verify(ctx, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Reused != 2*len(p.Tasks) {
		t.Errorf("rerun reused %d turns, want %d (every epoch)", again.Reused, 2*len(p.Tasks))
	}
	if diff := cmp.Diff(out.Summary, again.Summary); diff != "" {
		t.Errorf("rerun summary differs (-first +rerun):\n%s", diff)
	}
}

// TestOneEpochUnchanged (issue 19): a run without epochs is epoch 1 of every
// task, and its summary's mean is the task-weighted mean of turn scores, as
// it always was.
func TestOneEpochUnchanged(t *testing.T) {
	l := newLocal()
	e, p := newEngine(t, l, nil)
	out, err := e.Verify(context.Background(), fixtureInput(p, "c", "good"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ws, w float64
	for _, r := range out.Results {
		if r.Epoch != 1 {
			t.Errorf("%s: epoch %d, want 1", r.Label, r.Epoch)
		}
		if r.TurnScore != nil {
			ws += r.weight * *r.TurnScore
			w += r.weight
		}
	}
	if out.Summary.MeanScore != ws/w || out.Summary.Epochs != 1 {
		t.Errorf("mean_score %v epochs %d, want %v and 1", out.Summary.MeanScore, out.Summary.Epochs, ws/w)
	}
}
