package verify

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/pkg/jsonpos"
)

// checkTurnLine checks the two shortcuts decodeTurn takes on line against
// encoding/json, which they stand in for: metrics read off the tree
// (fromTree) equal json.Unmarshal's, and a held line's parts (heldLine)
// equal those of the line decoded by encoding/json (inlinePartsOf). It
// reports which of them were taken.
func checkTurnLine(t *testing.T, line []byte) (fromTree, held bool) {
	t.Helper()
	o := jsonpos.Options{BuildDepth: 1, AllowUnknownFields: true}
	root, err := jsonpos.Parse(line, o)
	if err != nil {
		return false, false
	}
	if root.Kind == jsonpos.Object && plainKeys(root) {
		var fast metrics
		if fromTree = fast.fromTree(root); fromTree {
			var want metrics
			if err := jsonpos.DecodeNode(line, root, &want, o); err != nil {
				t.Fatalf("fromTree(%q) decoded what encoding/json refuses: %v", line, err)
			}
			if diff := cmp.Diff(want, fast); diff != "" {
				t.Fatalf("fromTree(%q) (-encoding/json +tree):\n%s", line, diff)
			}
		}
	}
	ts, spans, _ := decodeTurn("t.jsonl", "/d", 1, line, "dflt")
	if ts == nil || spans == nil {
		return fromTree, false
	}
	wantTrace, wantBefore, wantAfter, err := inlinePartsOf("t.jsonl", line)
	if err != nil {
		t.Fatalf("decodeTurn(%q) kept spans of a line encoding/json refuses: %v", line, err)
	}
	h := &heldLine{line: line, spans: *spans}
	gotTrace, gotBefore, gotAfter, err := h.load()
	if err != nil {
		t.Fatalf("heldLine(%q).load() = %v", line, err)
	}
	for _, p := range []struct {
		part      string
		want, got []byte
	}{{"trace", wantTrace, gotTrace}, {"state_before", wantBefore, gotBefore}, {"state_after", wantAfter, gotAfter}} {
		if string(p.want) != string(p.got) {
			t.Fatalf("heldLine(%q).load() %s = %q, want %q", line, p.part, p.got, p.want)
		}
	}
	if h.line != nil {
		t.Fatalf("heldLine(%q) keeps its bytes after it is loaded", line)
	}
	return fromTree, true
}

// TestTurnLineShortcuts: lines plain and not (keys repeated or in another
// case, values of the wrong type, numbers out of range, null, white space
// and strings holding brackets in the trace) decode as encoding/json
// decodes them.
func TestTurnLineShortcuts(t *testing.T) {
	t.Parallel()
	lines := map[string]string{
		"bench":          `{"label":"t0000000","candidate":"c0000","latency_s":2,"trace":[{"type":"phase","phase":"skill_dispatch"},{"type":"final_answer","payload":{"message":"The release passes: 0 checks green."}},{"type":"done","reply":"ok","finalized":true}]}`,
		"white space":    ` { "label" : "a" , "trace" : [ { "type" : "done" } ,  {"type":"x", "n": [1, 2 ,3]}  ] , "state_after" : { "tickets" : [ ] } } `,
		"brackets":       `{"label":"a","trace":[{"type":"x","s":"],[{\"}"},"]",[],{}]}`,
		"escapes":        `{"label":"a\u0062","trace":[{"type":"x","s":"\\"}],"persona":"\"p\""}`,
		"empty trace":    `{"label":"a","trace":[]}`,
		"blank trace":    `{"label":"a","trace":[  ]}`,
		"null trace":     `{"label":"a","trace":null,"trace_file":"x.ndjson"}`,
		"nulls":          `{"label":"a","persona":null,"latency_s":null,"cost_usd":null,"epoch":null,"trace":[]}`,
		"numbers":        `{"label":"a","latency_s":-0,"cost_usd":1.5e-3,"epoch":2,"trace":[]}`,
		"out of range":   `{"label":"a","latency_s":1e999,"trace":[]}`,
		"wrong type":     `{"label":"a","latency_s":"slow","trace":[]}`,
		"label number":   `{"label":5,"trace":[]}`,
		"repeated":       `{"label":"a","label":"b","trace":[]}`,
		"repeated trace": `{"label":"a","trace":[{"type":"done"}],"trace":[]}`,
		"other case":     `{"label":"a","Label":"b","trace":[]}`,
		"other trace":    `{"label":"a","trace":[],"TRACE":[{"type":"done"}]}`,
		"kelvin":         "{\"label\":\"a\",\"trace\":[],\"\u212aey\":1,\"state_\u212a\":2}",
		"unknown keys":   `{"label":"a","trace":[],"extra":{"label":"x"},"notes":[1]}`,
		"snapshot paths": `{"label":"a","trace":[],"state_before":"before.json","state_after":{"x":1}}`,
		"null snapshot":  `{"label":"a","trace":[],"state_before":null}`,
		"not an object":  `[{"label":"a"}]`,
	}
	for name, line := range lines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, _ = checkTurnLine(t, []byte(line))
		})
	}
	rng := rand.New(rand.NewPCG(16, 5))
	const n = 2000
	trees, helds := 0, 0
	for range n {
		fromTree, held := checkTurnLine(t, []byte(randomTurnLine(rng)))
		trees, helds = trees+b2i(fromTree), helds+b2i(held)
	}
	if trees < n/10 || helds < n/10 || trees > n*9/10 {
		t.Errorf("of %d random lines %d were read off the tree and %d held: want each shortcut both taken and refused often", n, trees, helds)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestTurnLineSpansOnlyWhenPlain: a line whose keys encoding/json would
// match otherwise than exactly keeps no spans, so its parts are read by
// encoding/json.
func TestTurnLineSpansOnlyWhenPlain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line  string
		plain bool
	}{
		{`{"label":"a","trace":[]}`, true},
		{`{"label":"a","trace":[],"extra":1}`, true},
		{`{"label":"a","trace":[],"Trace":[]}`, false},
		{`{"label":"a","trace":[],"trace":[]}`, false},
		{`{"label":"a","label":"a","trace":[]}`, false},
		{`{"label":"a","trace":[],"STATE_AFTER":{}}`, false},
	} {
		_, spans, ds := decodeTurn("t.jsonl", "/d", 1, []byte(tc.line), "dflt")
		if ds.HasErrors() {
			t.Fatalf("decodeTurn(%q) = %v", tc.line, ds)
		}
		if got := spans != nil; got != tc.plain {
			t.Errorf("decodeTurn(%q) spans = %v, want spans %v", tc.line, spans, tc.plain)
		}
	}
}

// FuzzTurnLine checks checkTurnLine on any line.
func FuzzTurnLine(f *testing.F) {
	f.Add([]byte(`{"label":"a","latency_s":2,"trace":[{"type":"done","reply":"ok"}],"state_after":{"x":[1]}}`))
	f.Add([]byte(`{"label":"a","Label":"b","trace":[ {"s":"]\""} ,[]],"epoch":1e999}`))
	f.Add([]byte(`{"label":null,"trace":null,"trace_file":"x","cost_usd":-0.0}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		_, _ = checkTurnLine(t, line)
	})
}

// randomTurnLine is a turns line of random keys (lineKeys, other
// spellings of them, unknown ones; some repeated) and values of every kind.
func randomTurnLine(rng *rand.Rand) string {
	sp := func() string { return []string{"", "", " ", "\t", " \r\n "}[rng.IntN(5)] }
	var value func(depth int) string
	value = func(depth int) string {
		switch k := rng.IntN(12); {
		case k == 0:
			return "null"
		case k == 1:
			return []string{"true", "false"}[rng.IntN(2)]
		case k <= 3:
			return []string{"2", "-0", "1.5e-3", "1e999", "0.1", "-12", "3.0"}[rng.IntN(7)]
		case k <= 6:
			return []string{`"a"`, `"2026-11-30T09:00:00Z"`, `"]["`, `"\\"`, `"\"}"`, `"\u00e9x"`, `""`}[rng.IntN(7)]
		case k <= 8 && depth < 3:
			var elems []string
			for range rng.IntN(4) {
				elems = append(elems, sp()+value(depth+1)+sp())
			}
			return "[" + strings.Join(elems, ",") + sp() + "]"
		case depth < 3:
			var members []string
			for range rng.IntN(4) {
				members = append(members, fmt.Sprintf(`%s"%s"%s:%s`, sp(), []string{"type", "x", "label"}[rng.IntN(3)], sp(), sp()+value(depth+1)+sp()))
			}
			return "{" + strings.Join(members, ",") + sp() + "}"
		}
		return `"x"`
	}
	var members []string
	for range rng.IntN(5) {
		key := lineKeys[rng.IntN(len(lineKeys))]
		switch rng.IntN(10) {
		case 0:
			key = strings.ToUpper(key[:1]) + key[1:]
		case 1:
			key = "extra"
		}
		v := value(0)
		switch key {
		case "label", "candidate", "persona", "trace_file":
			if rng.IntN(4) > 0 {
				v = `"s"`
			}
		case "trace":
			if rng.IntN(4) > 0 {
				v = "[" + sp() + value(1) + sp() + "," + value(1) + "]"
			}
		}
		members = append(members, sp()+`"`+key+`"`+sp()+":"+sp()+v+sp())
	}
	if rng.IntN(4) > 0 { // most lines are turns
		i := rng.IntN(len(members) + 1)
		members = append(members[:i], append([]string{`"label":"t"`, `"trace":[` + value(1) + sp() + "," + sp() + value(1) + `]`}, members[i:]...)...)
	}
	return "{" + strings.Join(members, ",") + "}"
}
