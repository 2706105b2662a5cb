package pack

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// TestFastYAMLSame checks that fastSeq reads every group of tasks of the
// corpus it accepts as yaml.v3 and the builder do, and that it accepts the generated
// packs' (so that it is in use).
func TestFastYAMLSame(t *testing.T) {
	t.Parallel()
	accepted := 0
	for _, in := range splitInputs(t) {
		accepted += checkFastYAMLPack(t, in.name, in.src)
	}
	// The generated pack without its one flow mapping (which fastSeq
	// leaves to yaml.v3).
	gen := strings.ReplaceAll(string(generatedPack(100)), "      tool_args: {search: [query]}\n", "")
	if n := checkFastYAMLPack(t, "generated", []byte(gen)); n != (100+splitGroup-1)/splitGroup {
		t.Errorf("fastSeq read %d groups of the generated pack, want all", n)
	}
	if accepted < 30 {
		t.Errorf("fastSeq read %d groups of the corpus, want at least 30: is it in use?", accepted)
	}
	for _, src := range fastYAMLCases {
		checkFastYAML(t, src, []byte(src), 2)
	}
}

// fastYAMLCases are task lists near the edge of what fastSeq reads.
var fastYAMLCases = []string{
	"  - a: b\n    c: >\n      x\n      y\n    d: |\n      x\n      y\n",
	"  - a: b\n    c: >\n     x\n    d: [a, b,c, 1, 01, -1, x.y, /z, true, y, n, no, on, off, null, ~]\n",
	"  - a: [ a ]\n    b: []\n    c: [ ]\n    d: [a,]\n    e: [a b]\n",
	"  - a: 1\n    b: 123456789012345678\n    c: 1234567890123456789\n    d: 0\n    e: 00\n    f: 1.5\n    g: 1e3\n    h: 0x1\n",
	"  - a: http://x:1/y\n    b: a:b\n    c: a: b\n    d: a:\n    e: a - b [c] {d} e,f\n    f: x && !y || z > 1\n",
	"  - a:\n      - b: c\n        d:\n          e: f\n      - b: d\n    g: h\n  - a: b\n",
	"  - a:\n    - b: c\n  - x: y\n",
	"  - a: b\n     c\n  - x: y\n",
	"  - a: b\n\n  - x: y\n",
	"  - a: b\n  - x: y\n\n\n",
	"  - a: >\n      x\n        y\n      z\n",
	"  - a: |\n      x\n    b: c\n",
	"  - a: >\n    b: c\n",
	"  - a: >\n     x\n    b: c\n",
	"  -  a: b\n",
	"  - a:  b\n    c:   [x]\n",
	"  - a: b\n    a: c\n",
	"  - True: b\n    null: c\n    Yes: d\n",
	"  - a: é ü\n    b: [é]\n",
	"  - a: b\u2028c\n",
	"  - a: b\n  -\n",
	"  - - a\n",
	"  - a\n",
	"  - a: b\n    c:\n  - d: e\n",
	"  - a: b\n   c: d\n",
	"  - a: b\n      c: d\n",
	"  - a: >\n      x\n  b: c\n",
	"  - a:b\n",
	"  - a: b:\n",
	"  - a: [b]x\n",
	"  - a: [b\n",
	"  - a: [b, [c]]\n",
	"  - a: 0.0\n    b: 1.50\n    c: [2.0, 0.5, 10]\n    d: 1.25\n",
	"  - a: true\n    b: FALSE\n    c: ~\n    d: Null\n    e: [true, ~, 1.5, 0.0, 00.1, 1., .5, 1.5e3, 1_0, 12345678901234567.5]\n    f: 0.5\n",
}

// checkFastYAMLPack compares fastSeq with yaml.v3 on every group of tasks of
// src and returns how many fastSeq read.
func checkFastYAMLPack(t *testing.T, name string, src []byte) int {
	t.Helper()
	sp, ok := splitTasks(src)
	if !ok {
		return 0
	}
	accepted := 0
	for g := 0; g < len(sp.chunks); g += splitGroup {
		first, last := sp.chunks[g], sp.chunks[min(g+splitGroup, len(sp.chunks))-1]
		if checkFastYAML(t, name, src[first.start:last.end], sp.indent) {
			accepted++
		}
	}
	return accepted
}

// checkFastYAML compares fastSeq with yaml.v3 and the builder on text and
// reports whether fastSeq read it.
func checkFastYAML(t testing.TB, name string, text []byte, indent int) bool {
	t.Helper()
	const lineOff = 7
	file := "p.yaml"
	got, ok := fastSeq(text, indent, &file, lineOff)
	if !ok {
		return false
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		t.Errorf("%s: fastSeq read %q; yaml.v3 says %v", name, clip(string(text)), err)
		return true
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.SequenceNode {
		t.Errorf("%s: fastSeq read %q; yaml.v3 read %d documents, not one list", name, clip(string(text)), len(doc.Content))
		return true
	}
	c := &collector{}
	b := newBuilder("p.yaml", c)
	b.lineOff = lineOff
	want := b.build(doc.Content[0]).items
	if len(c.list) > 0 || b.anchored {
		t.Errorf("%s: fastSeq read %q; the builder reports %v", name, clip(string(text)), c.list)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(node{}, mkey{}, at{})); diff != "" {
		t.Errorf("%s: fastSeq(%q) differs from yaml.v3 and the builder (-builder +fastSeq):\n%s", name, strings.ReplaceAll(string(text), "\n", "⏎"), diff)
	}
	return true
}

// FuzzFastYAMLSame checks fastSeq against yaml.v3 and the builder on any
// input it reads.
func FuzzFastYAMLSame(f *testing.F) {
	for _, c := range fastYAMLCases {
		f.Add([]byte(c), 2)
	}
	f.Add([]byte("- "+task("a")+"- "+task("b")), 0)
	f.Fuzz(func(t *testing.T, src []byte, indent int) {
		checkFastYAML(t, "fuzz", src, indent)
	})
}
