package pack

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// splitCases are hand-written packs whose tasks block is easy to split
// wrongly. want says whether the pack must be read task by task (1), must
// not be (0), or may be either (-1).
var splitCases = []struct {
	name string
	want int
	src  string
}{
	{"comments and blank lines", 1, head + "tasks:   # the tasks\n\n# first\n  - " + task("a") + "\n# between, at column 1\n    # indented\n\n  - " + task("b") + "  # trailing\n\n" + tail},
	{"indentless items", 1, head + "tasks:\n- " + strings.ReplaceAll(task("a"), "\n  ", "\n") + "- " + strings.ReplaceAll(task("b"), "\n  ", "\n") + tail},
	{"deep items", 1, head + "tasks:\n      - " + strings.ReplaceAll(task("a"), "\n  ", "\n      ") + "      - " + strings.ReplaceAll(task("b"), "\n  ", "\n      ") + tail},
	{"personas after tasks", 1, "schema_version: hsm.company_eval_pack.v1\ncompany: {id: x}\ntasks:\n  - " + task("a") + "personas: [cto]\n" + tail},
	{"no trailing newline", 1, head + tail + "tasks:\n  - " + strings.TrimSuffix(task("a"), "\n")},
	{"literal with dashes", 1, head + "tasks:\n  - label: a\n    persona: cto\n    scorer: answer_keywords\n    prompt: |\n      - not an item\n        - nor this\n      x\n  - " + task("b") + tail},
	{"literal ending at an item", 1, head + "tasks:\n  - label: a\n    persona: cto\n    scorer: answer_keywords\n    prompt: |\n      line\n  - " + task("b") + tail},
	{"flow tasks", 0, head + "tasks: [{label: a, persona: cto, prompt: p, scorer: answer_keywords}]\n" + tail},
	{"flow list across items", 0, head + "tasks:\n  - " + task("a") + "    slice_tags: [x,\n  - y]\n  - " + task("b") + tail},
	{"quoted across items", 0, head + "tasks:\n  - " + task("a") + "    slice_tags: \"x\n  - y\"\n  - " + task("b") + tail},
	{"quoted at column 1", -1, head + "tasks:\n  - " + task("a") + "    failure: \"x\ntasks: y\"\n" + tail},
	{"anchor in a task", 0, head + "tasks:\n  - " + task("a") + "    slice_tags: &t [x]\n  - " + task("b") + "    tool_catalog: *t\n" + tail},
	{"anchor used by scoring", 0, head + "tasks:\n  - " + task("a") + "    weight: &w 0.5\n" + "scoring: {process_weight: *w, kpi_weight: 0.5}\n"},
	{"anchor used within a task", 0, head + "tasks:\n  - " + task("a") + "    slice_tags: &t [x]\n    tool_catalog: *t\n" + tail},
	{"merge key", 0, head + "tasks:\n  - &base " + task("a") + "  - <<: *base\n    label: b\n" + tail},
	{"tabs in values", 1, head + "tasks:\n  - " + task("a") + "    slice_tags: [\"x\ty\"]\n" + tail},
	{"tab indentation", 0, head + "tasks:\n  - " + task("a") + "\tweight: 2\n" + tail},
	{"document marker", 0, "---\n" + head + "tasks:\n  - " + task("a") + tail},
	{"two documents", 0, head + "tasks:\n  - " + task("a") + tail + "---\nx: 1\n"},
	{"syntax error in a task", 0, head + "tasks:\n  - " + task("a") + "    weight: : 2\n" + tail},
	{"mis-indented key", 0, head + "tasks:\n  - " + task("a") + " weight: 2\n" + tail},
	{"key at the item column", 0, head + "tasks:\n  - " + task("a") + "  weight: 2\n" + tail},
	{"key at column 1 between items", 0, head + "tasks:\n- " + strings.ReplaceAll(task("a"), "\n  ", "\n") + "weight: 2\n- " + strings.ReplaceAll(task("b"), "\n  ", "\n") + tail},
	{"two tasks keys", 0, head + "tasks:\n  - " + task("a") + "tasks:\n  - " + task("b") + tail},
	{"tasks key twice, once quoted", -1, head + "tasks:\n  - " + task("a") + "\"tasks\":\n  - " + task("b") + tail},
	{"scalar task", 1, head + "tasks:\n  - just words\n  - " + task("b") + tail},
	{"empty task", 1, head + "tasks:\n  -\n  - " + task("b") + tail},
	{"nested list task", 1, head + "tasks:\n  - - a\n    - b\n  - " + task("b") + tail},
	{"tasks problems", 1, head + "tasks:\n  - label: a\n    persona: ceo\n    scorer: answer_keyword\n    weight: -1\n    bogus: 1\n    kpis: {answer_keywords: 3, nope: x}\n" +
		"    cel:\n      - {name: c, expr: 'size(x'}\n      - {name: c, expr: 3}\n  - label: a\n    prompt: [x]\n" + tail},
	{"tasks with a tag", 0, head + "tasks: !!seq\n  - " + task("a") + tail},
	{"tag on an item", 1, head + "tasks:\n  - !!map\n    " + strings.TrimPrefix(task("a"), "") + tail},
	{"bom", 1, "\ufeff" + head + "tasks:\n  - " + task("a") + tail},
	{"non-ASCII", 1, head + "tasks:\n  - label: é\n    persona: cto\n    scorer: answer_keywords\n    prompt: \"ünïcödé\n      folded\"\n    cel:\n      - name: x\n        expr: \"'é' == 'é' &&\n          true\"\n" + tail},
	{"duplicate key in a task", 1, head + "tasks:\n  - " + task("a") + "    label: c\n" + tail},
	{"wrong top-level type", 0, "- tasks:\n  - " + task("a")},
	{"tasks not a key", 0, head + "tasks\n  - " + task("a") + tail},
	{"no tasks", 0, head + tail},
	{"tasks empty", 0, head + "tasks:\n" + tail},
	{"item then mapping", 0, head + "tasks:\n  - " + task("a") + "  x: 1\n" + tail},
	{"dash without space", 0, head + "tasks:\n  -label: a\n" + tail},
	{"too many tasks for the schema", 1, head + "tasks:\n" + strings.Repeat("  - "+task("a"), 3) + tail},
	// Across the groups of tasks parsed at once (splitGroup).
	{"many tasks", 1, head + "tasks:\n" + tasks(0, 40) + tail},
	{"flow list across groups", 0, head + "tasks:\n" + tasks(0, 15) + "  - " + task("x") + "    slice_tags: [a,\n  - b]\n" + tasks(16, 40) + tail},
	{"quoted across groups", 0, head + "tasks:\n" + tasks(0, 15) + "  - " + task("x") + "    prompt: 'a\n  - b'\n" + tasks(16, 40) + tail},
	{"anchor across groups", 0, head + "tasks:\n" + tasks(0, 15) + "  - " + task("x") + "    slice_tags: &t [a]\n" + tasks(16, 20) + "  - " + task("y") + "    slice_tags: *t\n" + tail},
	{"problems across groups", 1, head + "tasks:\n" + tasks(0, 15) + "  - " + task("t5") + "    bogus: 1\n" + tasks(16, 40) + tail},
	{"problems in many tasks", 1, head + "tasks:\n" + badTasks(70) + tail},
	{"problems in many tasks and the rest", 1, "schema_version: v0\ncompany: {id: [x]}\npersonas: [cto, cto]\ntasks:\n" + badTasks(12) +
		"scoring: {process_weight: 0.9, kpi_weight: 0.5}\nkill_criteria:\n  - {name: k, expr: 'history.nope'}\n  - {name: k, expr: '1 +'}\n"},
}

// tasks writes tasks labelled t<from> to t<to-1>.
func tasks(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteString("  - " + task(fmt.Sprintf("t%d", i)))
	}
	return b.String()
}

// badTasks writes n tasks with problems that differ from task to task:
// duplicate labels, unknown personas, scorers and keys, wrong types, and CEL
// checks that do not parse, do not type-check, are not bool or double, or
// whose message_expr is not a string, some repeated across tasks.
func badTasks(n int) string {
	cels := []string{
		"expr: turn.finalized",
		"expr: 'size(turn.answer'",
		"expr: turn.nope",
		"expr: '1 + 2'",
		"expr: turn.finalized\n        message_expr: '42'",
		"expr: turn.finalized\n        message_expr: 'turn.bogus'",
		"expr: \"'a' == 1\"",
		"expr: 3",
		"expr: turn.finalized\n        weight: -2",
	}
	var b strings.Builder
	for i := range n {
		label := fmt.Sprintf("t%d", i%(n/2+7))
		persona, scorer := "cto", "answer_keywords"
		switch i % 5 {
		case 1:
			persona = "ceo"
		case 3:
			scorer = "answer_keyword"
		}
		fmt.Fprintf(&b, "  - label: %s\n    persona: %s\n    prompt: p%d\n    scorer: %s\n", label, persona, i, scorer)
		switch i % 7 {
		case 2:
			b.WriteString("    bogus: 1\n")
		case 4:
			b.WriteString("    kpis: {answer_keywords: 3, nope: x}\n")
		case 6:
			b.WriteString("    weight: [1]\n")
		}
		fmt.Fprintf(&b, "    cel:\n      - name: c\n        %s\n", cels[i%len(cels)])
		if i%4 == 0 {
			fmt.Fprintf(&b, "      - name: c\n        %s\n", cels[(i/4)%len(cels)])
		}
	}
	return b.String()
}

const (
	head = "schema_version: hsm.company_eval_pack.v1\ncompany:\n  id: x\npersonas: [cto]\n"
	tail = "scoring:\n  process_weight: 0.5\n  kpi_weight: 0.5\n"
)

func task(label string) string {
	return "label: " + label + "\n    persona: cto\n    prompt: >\n      Do it.\n    scorer: answer_keywords\n    kpis:\n      answer_keywords: [x]\n" +
		"    cel:\n      - name: c\n        expr: turn.finalized\n"
}

// splitInput is a pack of the split corpus; want is as in splitCases.
type splitInput struct {
	name string
	src  []byte
	want int
}

// splitInputs are the packs TestSplitSameAsWhole reads both ways: the split
// cases, every pack in the repository, the fuzz seeds, a generated pack and
// the bundled packs again as they are and with CRLF line breaks.
func splitInputs(t testing.TB) []splitInput {
	t.Helper()
	var inputs []splitInput
	for _, c := range splitCases {
		inputs = append(inputs, splitInput{c.name, []byte(c.src), c.want})
	}
	var files []string
	for _, g := range []string{"../../packs/*.yaml", "testdata/*/*.yaml", "../../examples/*/*.yaml", "../../testdata/*/*.yaml", "../../e2e/testdata/*.yaml", "../../e2e/testdata/*/*.yaml"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found %d pack files, want the bundled packs and testdata", len(files))
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, splitInput{f, src, -1})
	}
	seeds, err := filepath.Glob("testdata/fuzz/FuzzLoadPack/*")
	if err != nil || len(seeds) == 0 {
		t.Fatalf("no fuzz seeds: %v", err)
	}
	for _, f := range seeds {
		inputs = append(inputs, splitInput{f, fuzzSeed(t, f), -1})
	}
	inputs = append(inputs, splitInput{"generated", generatedPack(300), 1})
	// Every bundled pack again with CRLF line breaks, and with its items
	// written without indentation.
	for _, f := range bundledPacks {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, splitInput{f + " (bundled)", src, 1},
			splitInput{f + " (CRLF)", bytes.ReplaceAll(src, []byte("\n"), []byte("\r\n")), 1})
	}
	return inputs
}

// TestSplitSameAsWhole reads packs task by task and as a whole document and
// compares the packs and the diagnostics: they must be the same.
func TestSplitSameAsWhole(t *testing.T) {
	t.Parallel()
	for _, in := range splitInputs(t) {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			checkSplitSame(t, in.name, in.src, in.want)
		})
	}
}

func checkSplitSame(t *testing.T, name string, src []byte, want int) {
	t.Helper()
	for _, opts := range []Options{{Scorers: testCatalog()}, {}} {
		whole, _, wholeList, _ := parseWith("p.yaml", src, opts, false, false)
		split, _, splitList, didSplit := parseWith("p.yaml", src, opts, true, false)
		if diff := cmp.Diff(whole, split, cmpopts.EquateEmpty(), cmp.AllowUnexported(Task{}, taskPos{}, kpiPos{})); diff != "" {
			t.Errorf("%s: the pack read task by task differs from the whole document's (-whole +split):\n%s", name, diff)
		}
		if diff := cmp.Diff(wholeList, splitList); diff != "" {
			t.Errorf("%s: diagnostics read task by task differ from the whole document's (-whole +split):\n%s", name, diff)
		}
		if want >= 0 && didSplit != (want == 1) {
			t.Errorf("%s: read task by task = %v, want %v (%v)", name, didSplit, want == 1, wholeList)
		}
	}
}

// fuzzSeed reads a "go test fuzz v1" file of one []byte.
func fuzzSeed(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "\n")
	rest = strings.TrimSpace(rest)
	q, ok := strings.CutPrefix(rest, "[]byte(")
	if !ok {
		t.Fatalf("%s: not a []byte seed", path)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

// TestSplitLargePack checks a large generated pack is read task by task and
// the same as a whole document.
func TestSplitLargePack(t *testing.T) {
	t.Parallel()
	n := 1000
	if testing.Short() {
		n = 300
	}
	checkSplitSame(t, fmt.Sprintf("generated(%d)", n), generatedPack(n), 1)
}

// FuzzSplitSameAsWhole checks reading task by task and as a whole document
// agree on any input. Its seeds are the small split cases and FuzzLoadPack's
// seeds (large seeds make the fuzzer spend its time minimizing).
func FuzzSplitSameAsWhole(f *testing.F) {
	for _, c := range splitCases {
		if len(c.src) < 2048 {
			f.Add([]byte(c.src))
		}
	}
	seeds, _ := filepath.Glob("testdata/fuzz/FuzzLoadPack/*")
	for _, path := range seeds {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		_, rest, _ := strings.Cut(string(b), "\n")
		if q, ok := strings.CutPrefix(strings.TrimSpace(rest), "[]byte("); ok {
			if src, err := strconv.Unquote(strings.TrimSuffix(q, ")")); err == nil {
				f.Add([]byte(src))
			}
		}
	}
	catalog := testCatalog()
	f.Fuzz(func(t *testing.T, src []byte) {
		whole, _, wholeList, _ := parseWith("f.yaml", src, Options{Scorers: catalog}, false, false)
		split, _, splitList, _ := parseWith("f.yaml", src, Options{Scorers: catalog}, true, false)
		if diff := cmp.Diff(whole, split, cmpopts.EquateEmpty(), cmp.AllowUnexported(Task{}, taskPos{}, kpiPos{})); diff != "" {
			t.Errorf("pack (-whole +split):\n%s", diff)
		}
		if diff := cmp.Diff(wholeList, splitList); diff != "" {
			t.Errorf("diagnostics (-whole +split):\n%s", diff)
		}
	})
}
