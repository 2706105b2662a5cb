package pack

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestSplitPipelineSameAsWhole reads packs of many more tasks than are
// parsed ahead of the decoding (splitAhead groups of splitGroup), with
// problems in tasks far apart (a label used again many groups later, an
// unknown persona, a schema error, a task that cannot be read task by
// task), task by task and as a whole document: the packs and the
// diagnostics, in their order, must be the same, whatever the order the
// groups are parsed in. A split given up midway leaves no goroutine behind.
func TestSplitPipelineSameAsWhole(t *testing.T) {
	n := splitAhead*splitGroup*6 + 5 // the last group is short
	base := string(generatedPack(n))
	task := func(i int) string { return fmt.Sprintf("  - label: task_%04d\n", i) }
	swap := func(src string, i int, from, to string) string {
		at := strings.Index(src, task(i))
		if at < 0 {
			t.Fatalf("task %d not found", i)
		}
		rest := src[at:]
		j := strings.Index(rest, from)
		if j < 0 {
			t.Fatalf("task %d: %q not found", i, from)
		}
		return src[:at] + rest[:j] + to + rest[j+len(from):]
	}
	late := n - 3
	dup := swap(base, late, "label: task_"+fmt.Sprintf("%04d", late), "label: task_0003")
	dup = swap(dup, splitAhead*splitGroup+1, "label: task_"+fmt.Sprintf("%04d", splitAhead*splitGroup+1), "label: task_0003")
	problems := swap(dup, 2*splitGroup+7, "persona: cto", "persona: nobody")
	problems = swap(problems, 3*splitAhead*splitGroup+2, "weight: 1.5", "weight: heavy")
	problems = swap(problems, n-1, "persona: cto", "persona: ghost")
	anchored := swap(problems, 4*splitAhead*splitGroup+9, "weight: 1.5", "weight: &w 1.5")
	// The split given up in a group that reuses a slot (group splitAhead or
	// later), through the paths that leave the group's tasks unwritten: a
	// flow list running into the next item (the items miscounted) and a key
	// indented too far (the YAML parser's error). A slot holding the tasks
	// of the group splitAhead before must not pass for this group's.
	late = (splitAhead+1)*splitGroup + 3
	flowLate := swap(problems, late, "weight: 1.5", "slice_tags: [x,\n  - y]\n    weight: 1.5")
	indentLate := swap(problems, late, "    weight: 1.5", "       weight: 1.5")
	type pipeCase struct {
		name  string
		src   string
		split int // as checkSplitSame's want
	}
	cases := []pipeCase{
		{"clean", base, 1},
		{"duplicate labels", dup, 1},
		{"problems", problems, 1},
		{"anchor in a late task", anchored, 0},
		{"flow list across items in a late group", flowLate, 0},
		{"key indented too far in a late group", indentLate, 0},
	}
	for _, size := range []int{1, 2, splitGroup - 1, splitGroup, splitGroup + 1, splitAhead * splitGroup, splitAhead*splitGroup + 1} {
		cases = append(cases, pipeCase{fmt.Sprintf("%d tasks", size), string(generatedPack(size)), -1})
	}
	for _, c := range cases {
		before := runtime.NumGoroutine()
		checkSplitSame(t, c.name, []byte(c.src), c.split)
		checkSplitSame(t, c.name+" (CRLF)", bytes.ReplaceAll([]byte(c.src), []byte("\n"), []byte("\r\n")), c.split)
		// One worker: the decoding and the only worker take turns.
		prev := runtime.GOMAXPROCS(1)
		checkSplitSame(t, c.name+" (GOMAXPROCS 1)", []byte(c.src), c.split)
		runtime.GOMAXPROCS(prev)
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if got := runtime.NumGoroutine(); got > before {
			t.Errorf("%s: %d goroutines after reading it, %d before", c.name, got, before)
		}
	}
	// The problems are there to be compared.
	_, list := Parse("p.yaml", []byte(problems), Options{Scorers: testCatalog()})
	if len(list.Errors()) < 4 {
		t.Fatalf("the pack with problems gave %d errors, want at least 4: %v", len(list.Errors()), list)
	}
}
