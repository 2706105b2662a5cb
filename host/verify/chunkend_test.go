package verify

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/pkg/scorer"
)

// TestPassFindsTurnsFileShrunkAtItsEnd: a line whose label changed (same
// length) to one that is no task of the pack after the file was indexed
// leaves the pass with fewer turns than counted. The pass must stop with
// errTurnsChanged whatever the chunk size, also when its last chunk or
// part is short and no read after it would be needed to end the pass.
func TestPassFindsTurnsFileShrunkAtItsEnd(t *testing.T) {
	p := onePack([3]string{"t0", "s", "k"}, [3]string{"t1", "s", "k"}, [3]string{"t2", "s", "k"})
	isTask := func(l string) bool { return p.Task(l) != nil }
	for _, chunk := range []int{0, 1, 2, 3, 4, 256} {
		path := filepath.Join(t.TempDir(), "turns.jsonl")
		var b strings.Builder
		for _, l := range []string{"t0", "t1", "t2"} {
			b.WriteString(turnLine("a", l, 0) + "\n")
		}
		writeFile(t, path, b.String())
		idx, ds, err := indexTurnsFile(path, "", withTasks(isTask))
		if err != nil || len(ds) > 0 {
			t.Fatalf("index: %v %v", ds, err)
		}
		if idx[0].src.tasks != 3 {
			t.Fatalf("tasks = %d", idx[0].src.tasks)
		}
		src, _ := os.ReadFile(path)
		writeFile(t, path, strings.Replace(string(src), `"label":"t1"`, `"label":"x1"`, 1))
		e, err := New(Config{Pack: p, Scorers: constScorer{}, Descriptions: map[scorer.ID]scorer.Description{"s": {ID: "s"}},
			ChunkSize: chunk, BatchSize: 1, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		out, err := e.Verify(context.Background(), idx[0], Options{})
		if !errors.Is(err, errTurnsChanged) {
			n := -1
			if out != nil {
				n = out.Summary.N
			}
			t.Errorf("chunk %d: Verify = N %d, err %v; want errTurnsChanged", chunk, n, err)
		}
		closeInputs(idx)
	}
}

// TestSnapshotWarnedOnceAChunkOfParts: an inline snapshot shared by
// every turn, with warnings (unknown fields), is parsed once a chunk and
// so warned about once a chunk, also when the chunk is read and prepared
// in parts (two parts of two turns here): the warnings come from lines 1
// and 5 only.
func TestSnapshotWarnedOnceAChunkOfParts(t *testing.T) {
	var tasks [][3]string
	var b strings.Builder
	for i := range 8 {
		l := "t" + string(rune('0'+i))
		tasks = append(tasks, [3]string{l, "s", "k"})
		line := turnLine("a", l, 0)
		line = strings.Replace(line, `"state_after":{"tickets":[]}`, `"state_after":{"tickets":[],"bogus":1}`, 1)
		b.WriteString(line + "\n")
	}
	p := onePack(tasks...)
	path := filepath.Join(t.TempDir(), "turns.jsonl")
	writeFile(t, path, b.String())
	given, ds, err := ReadTurnsFile(path, "")
	if err != nil {
		t.Fatalf("ReadTurnsFile = %v %v", ds, err)
	}
	e, err := New(Config{Pack: p, Scorers: constScorer{}, Descriptions: map[scorer.ID]scorer.Description{"s": {ID: "s"}},
		ChunkSize: 4, BatchSize: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Verify(context.Background(), given[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.parts != 2 {
		t.Fatalf("parts = %d, want 2: the test needs a chunk read in parts", e.parts)
	}
	lines := map[string]int{} // the turns file's line of each warning (its position names the line, then where in the snapshot)
	for _, d := range out.Diagnostics {
		if strings.Contains(d.Message, "unknown field") {
			_, at, _ := strings.Cut(d.String(), "turns.jsonl:")
			line, _, _ := strings.Cut(at, ":")
			lines[line]++
		}
	}
	if want := map[string]int{"1": 2, "5": 2}; !maps.Equal(lines, want) {
		t.Errorf("unknown-field warnings by line = %v, want %v (each chunk's first turn, once)", lines, want)
	}
}
