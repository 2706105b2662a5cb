package jsonpos

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/pkg/diag"
)

// TestOnePositionedJSONReader covers Parse: the byte range of each value,
// and malformed input at the offending byte with encoding/json's message.
func TestOnePositionedJSONReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		src     string
		o       Options
		path    string // a value to locate, through At at its first byte
		wantOff int
		wantEnd int
		wantErr string // substring; "" for none
		errOff  int
		errIs   error
	}{
		{name: "scalar", src: ` 12.5 `, wantOff: 1, wantEnd: 5},
		{name: "member", src: `{"a": {"b": [1, "x"]}}`, path: "a.b[1]", wantOff: 16, wantEnd: 19},
		{name: "unicode key", src: `{"é": true}`, path: "é", wantOff: 7, wantEnd: 11},
		{name: "escaped string", src: `["a\"b", 2]`, path: "[1]", wantOff: 9, wantEnd: 10},
		{name: "trailing comma", src: "{\n  \"a\": 1,}", wantErr: "invalid character '}' looking for beginning of object key string", errOff: 11, errIs: ErrSyntax},
		{name: "truncated", src: `{"a": [`, wantErr: "unexpected end of JSON input", errOff: 7, errIs: ErrSyntax},
		{name: "bad literal", src: `nul`, wantErr: "in literal null", errOff: 2, errIs: ErrSyntax},
		{name: "bad literal inside", src: `[nope]`, wantErr: "invalid character 'o' in literal null", errOff: 2, errIs: ErrSyntax},
		{name: "trailing data", src: `{} x`, wantErr: "invalid character 'x' after top-level value", errOff: 3, errIs: ErrSyntax},
		{name: "control character", src: "\"a\x01\"", wantErr: "invalid character '\\x01' in string literal", errOff: 2, errIs: ErrSyntax},
		{name: "bad number", src: `[01]`, wantErr: "invalid character '1' after array element", errOff: 2, errIs: ErrSyntax},
		{name: "empty", src: ``, wantErr: "unexpected end of JSON input", errOff: 0, errIs: ErrSyntax},
		{name: "too deep", src: `[[[[1]]]]`, o: Options{MaxDepth: 2}, wantErr: "nested more than 2 levels deep", errOff: 3, errIs: ErrTooDeep},
		{name: "duplicates kept", src: `{"a": 1, "a": 2}`, path: "a", wantOff: 14, wantEnd: 15},
		{name: "duplicates rejected", src: `{"a": 1, "a": 2}`, o: Options{RejectDuplicates: true}, wantErr: `duplicate key "a"`, errOff: 9, errIs: ErrDuplicateKey},
		{name: "duplicates nested rejected", src: `{"x": [{"b": 1, "b": 2}]}`, o: Options{RejectDuplicates: true}, wantErr: `duplicate key "b"`, errOff: 16, errIs: ErrDuplicateKey},
		{name: "build depth keeps spans", src: `{"t": [{"a": 1}], "s": "v"}`, o: Options{BuildDepth: 1}, path: "t", wantOff: 6, wantEnd: 16},
		{name: "build depth still checks", src: `{"t": [{"a": }]}`, o: Options{BuildDepth: 1}, wantErr: "invalid character '}'", errOff: 13, errIs: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, err := Parse([]byte(tt.src), tt.o)
			if tt.wantErr != "" {
				var e *Error
				if !errors.As(err, &e) || !strings.Contains(e.Msg, tt.wantErr) || e.Off != tt.errOff || !errors.Is(err, tt.errIs) {
					t.Fatalf("Parse(%q) = %#v, want an error %q at offset %d wrapping %v", tt.src, err, tt.wantErr, tt.errOff, tt.errIs)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q) = %v", tt.src, err)
			}
			n, path := root.At(tt.wantOff)
			if path != tt.path || n.Off != tt.wantOff || n.End != tt.wantEnd {
				t.Errorf("Parse(%q).At(%d) = %q [%d,%d), want %q [%d,%d)", tt.src, tt.wantOff, path, n.Off, n.End, tt.path, tt.wantOff, tt.wantEnd)
			}
		})
	}
}

func TestParseValues(t *testing.T) {
	t.Parallel()
	root, err := Parse([]byte(`{"s": "a\u00e9", "n": -1.5e3, "b": false, "z": null, "a": [], "o": {}}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range root.Members {
		got = append(got, m.Key+"="+m.Value.Short())
	}
	want := []string{`s=a string "aé"`, "n=a number -1.5e3", "b=a boolean false", "z=null", "a=an array", "o=an object"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse members (-want +got):\n%s", diff)
	}
	if m := root.Get("n"); m == nil || m.Off != 17 || string(m.Value.Raw([]byte(`{"s": "a\u00e9", "n": -1.5e3`))) != "-1.5e3" {
		t.Errorf("Get(n) = %+v", m)
	}
	if root.Get("missing") != nil {
		t.Errorf("Get(missing) != nil")
	}
}

type manifest struct {
	Plugins []plugin `json:"plugins"`
}

type plugin struct {
	ID      string          `json:"id"`
	Count   int             `json:"count"`
	Extra   json.RawMessage `json:"extra"`
	Weights map[string]*float64
	embedded
}

type embedded struct {
	Note string `json:"note"`
}

// TestDecodeStrict covers Decode: unknown keys at the key, wrong types at
// the value, both with their path.
func TestDecodeStrict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		src     string
		wantErr string
		errOff  int
		errIs   error
	}{
		{name: "ok", src: `{"plugins": [{"id": "a", "count": 2, "extra": {"any": 1}, "weights": {"x": null}, "note": "n"}]}`},
		{name: "case-insensitive", src: `{"Plugins": [{"ID": "a"}]}`},
		{name: "unknown top", src: `{"plugins": [], "extra": 1}`, wantErr: `unknown field "extra"`, errOff: 16, errIs: ErrUnknownField},
		{name: "unknown nested", src: "{\"plugins\": [{}, {\"id\": \"a\",\n \"idd\": 1}]}", wantErr: `plugins[1]: unknown field "idd"`, errOff: 30, errIs: ErrUnknownField},
		{name: "wrong scalar", src: `{"plugins": [{"id": 3}]}`, wantErr: "plugins[0].id: want a string, got number", errOff: 20, errIs: ErrType},
		{name: "wrong container", src: `{"plugins": {"id": 3}}`, wantErr: "plugins: want a list, got object", errOff: 12, errIs: ErrType},
		{name: "fraction for int", src: `{"plugins": [{"count": 1.5}]}`, wantErr: "plugins[0].count: want a number, got number 1.5", errOff: 23, errIs: ErrType},
		{name: "map value", src: `{"plugins": [{"weights": {"x": "y"}}]}`, wantErr: "plugins[0].weights.x: want a number, got string", errOff: 31, errIs: ErrType},
		{name: "top not an object", src: `[1]`, wantErr: "want an object, got array", errOff: 0, errIs: ErrType},
		{name: "syntax first", src: `{"plugins": [,]}`, wantErr: "invalid character ','", errOff: 13, errIs: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var m manifest
			_, err := Decode([]byte(tt.src), &m, Options{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Decode(%q) = %v", tt.src, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tt.wantErr) || e.Off != tt.errOff || !errors.Is(err, tt.errIs) {
				t.Fatalf("Decode(%q) = %v (%#v), want %q at offset %d wrapping %v", tt.src, err, err, tt.wantErr, tt.errOff, tt.errIs)
			}
		})
	}
}

func TestSourcePos(t *testing.T) {
	t.Parallel()
	file := []byte("prefix\n  {\"a\": x}")
	tests := []struct {
		name string
		s    Source
		off  int
		want diag.Pos
	}{
		{"whole file", Source{File: "f", Src: file}, 9, diag.Pos{File: "f", Line: 2, Col: 3}},
		{"text inside the file", Source{File: "f", Src: file, Base: 9}, 6, diag.Pos{File: "f", Line: 2, Col: 9}},
		{"one line of a file", Source{File: "f.jsonl", Src: []byte(`{"a": x}`), Line: 7}, 6, diag.Pos{File: "f.jsonl", Line: 7, Col: 7}},
		{"clamped", Source{File: "f", Src: []byte("ab")}, 10, diag.Pos{File: "f", Line: 1, Col: 3}},
	}
	for _, tt := range tests {
		if got := tt.s.Pos(tt.off); got != tt.want {
			t.Errorf("%s: Pos(%d) = %v, want %v", tt.name, tt.off, got, tt.want)
		}
	}
	src := []byte(`{"a": x}`)
	_, err := Parse(src, Options{})
	d := Source{File: "f.json", Src: src}.Diag("c.syntax", "not valid JSON", err)
	if want := "f.json:1:7: c.syntax: not valid JSON: invalid character 'x' looking for beginning of value"; d.String() != want {
		t.Errorf("Diag = %q, want %q", d.String(), want)
	}
}

func TestReadFileLimit(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(path, []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if src, err := ReadFile(path, 8); err != nil || string(src) != `{"a": 1}` {
		t.Errorf("ReadFile(8 bytes, limit 8) = %q, %v", src, err)
	}
	if _, err := ReadFile(path, 7); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 7 bytes") {
		t.Errorf("ReadFile(8 bytes, limit 7) = %v, want ErrTooLarge", err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none"), 8); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v, want ErrNotExist", err)
	}
}

// TestDecodeNode covers decoding one value of a larger text: positions stay
// in the text and paths start at the value; unknown keys can be allowed.
func TestDecodeNode(t *testing.T) {
	t.Parallel()
	src := []byte(`[{"id": "a", "other": 1}, {"id": 7}, {"count": "x"}]`)
	root, err := Parse(src, Options{BuildDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{AllowUnknownFields: true}
	var got []string
	for _, e := range root.Elems {
		var p plugin
		if err := DecodeNode(src, e, &p, o); err != nil {
			var pe *Error
			errors.As(err, &pe)
			got = append(got, fmt.Sprintf("%d %v", pe.Off, err))
			continue
		}
		got = append(got, "ok "+p.ID)
	}
	want := []string{"ok a", "33 id: want a string, got number", "47 count: want a number, got string"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DecodeNode (-want +got):\n%s", diff)
	}
	var p plugin
	if err := DecodeNode(src, root.Elems[0], &p, Options{}); !errors.Is(err, ErrUnknownField) {
		t.Errorf("DecodeNode(strict) = %v, want ErrUnknownField", err)
	}
	var when struct{ At time.Time }
	_, err = Decode([]byte(`{"At": "noon"}`), &when, Options{})
	var e *Error
	if !errors.As(err, &e) || e.Off != 0 || !strings.Contains(err.Error(), "noon") {
		t.Errorf("Decode(bad time) = %#v, want an *Error at the value it could not decode", err)
	}
}

// TestReadFileRefusesNonRegular covers issue 14 item 3: a FIFO or a device
// is refused at once, never read (a FIFO without a writer would block).
func TestReadFileRefusesNonRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, p := range []string{fifo, "/dev/zero", "/dev/urandom", t.TempDir()} {
		if _, err := ReadFile(p, 1<<20); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("ReadFile(%s) = %v, want not a regular file", p, err)
		}
	}
}

// treeText renders every field of a tree, for comparing trees.
func treeText(n *Node) string {
	var b strings.Builder
	var walk func(n *Node, ind string)
	walk = func(n *Node, ind string) {
		fmt.Fprintf(&b, "%s%d [%d,%d) %q %v %v/%v\n", ind, n.Kind, n.Off, n.End, n.Text, n.Bool, n.Members == nil, n.Elems == nil)
		for _, m := range n.Members {
			fmt.Fprintf(&b, "%s%q@%d:\n", ind, m.Key, m.Off)
			walk(m.Value, ind+"  ")
		}
		for _, e := range n.Elems {
			walk(e, ind+"  ")
		}
	}
	walk(n, "")
	return b.String()
}

// TestParseTreesStandAlone: the parsers and buffers Parse recycles leave
// nothing shared between trees. Each text's tree is the same parsed alone,
// after other texts, and in parallel with them; nested objects and arrays
// keep their own members and elements. It fails if a tree is built in, or
// keeps, what the next Parse reuses.
func TestParseTreesStandAlone(t *testing.T) {
	many := `{` + strings.Repeat(`"k":[1,{"a":2}],`, 40) + `"z":{"y":[[],{},[{}]]}}`
	srcs := []string{
		`{"a":{"b":1,"c":[1,{"d":2},[3,4]]},"e":[{"f":{"g":"h"}}],"i":"j"}`,
		`[1,[2,[3,[4,{"x":[5]}]]],{"y":{}},[]]`,
		many,
		`{"label":"t1","trace":[{"type":"done"}],"label":"t2"}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"r":18}`,
		`{"a":[1,2,3`, // an error mid-way leaves the buffers dirty
		`"\u0041"`,
	}
	opts := []Options{{}, {BuildDepth: 1}, {BuildDepth: 2, Keys: []string{"a", "label"}}}
	alone := map[string]string{}
	for _, o := range opts {
		for _, s := range srcs {
			n, err := Parse([]byte(s), o)
			if err == nil {
				alone[fmt.Sprint(o.BuildDepth, s)] = treeText(n)
			}
		}
	}
	var trees []*Node
	var keys []string
	for range 3 {
		for _, o := range opts {
			for _, s := range srcs {
				if n, err := Parse([]byte(s), o); err == nil {
					trees, keys = append(trees, n), append(keys, fmt.Sprint(o.BuildDepth, s))
				}
			}
		}
	}
	for i, n := range trees {
		if got := treeText(n); got != alone[keys[i]] {
			t.Errorf("tree %d of %s after other parses:\n%s\nwant\n%s", i, keys[i], got, alone[keys[i]])
		}
	}
	// As the parser before the buffers were recycled built it.
	want := `5 [0,65) "" false false/true
"a"@1:
  5 [5,34) "" false false/true
  "b"@6:
    2 [10,11) "1" false true/true
  "c"@12:
    4 [16,33) "" false true/false
      2 [17,18) "1" false true/true
      5 [19,26) "" false false/true
      "d"@20:
        2 [24,25) "2" false true/true
      4 [27,32) "" false true/false
        2 [28,29) "3" false true/true
        2 [30,31) "4" false true/true
"e"@35:
  4 [39,56) "" false true/false
    5 [40,55) "" false false/true
    "f"@41:
      5 [45,54) "" false false/true
      "g"@46:
        3 [50,53) "h" false true/true
"i"@57:
  3 [61,64) "j" false true/true
`
	if got := alone[fmt.Sprint(0, srcs[0])]; got != want {
		t.Errorf("Parse(%s):\n%s\nwant\n%s", srcs[0], got, want)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				for _, o := range opts {
					for _, s := range srcs {
						if n, err := Parse([]byte(s), o); err == nil && treeText(n) != alone[fmt.Sprint(o.BuildDepth, s)] {
							t.Errorf("Parse(%s) in parallel differs", s)
						}
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestParseKeys: a key in Options.Keys is that very string; any other key,
// an escaped spelling of a known one and a string value equal to one are as
// without Keys.
func TestParseKeys(t *testing.T) {
	known := []string{"label", "trace"}
	src := []byte(`{"label":"label","lab\u0065l":1,"other":2,"trace":[],"trac":3}`)
	n, err := Parse(src, Options{Keys: known})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := Parse(src, Options{})
	if got, want := treeText(n), treeText(plain); got != want {
		t.Errorf("with Keys:\n%s\nwant\n%s", got, want)
	}
	if unsafe.StringData(n.Members[0].Key) != unsafe.StringData(known[0]) || unsafe.StringData(n.Members[3].Key) != unsafe.StringData(known[1]) {
		t.Errorf("a known key is a copy, not the string of Keys")
	}
	if unsafe.StringData(n.Members[1].Key) == unsafe.StringData(known[0]) || unsafe.StringData(n.Members[0].Value.Text) == unsafe.StringData(known[0]) {
		t.Errorf("an escaped key or a string value is the string of Keys")
	}
}

// TestParseLineAllocs: a turns line read one level deep, its keys known,
// takes a block of nodes, its object's members and the strings of its
// values: four allocations (it was 14).
func TestParseLineAllocs(t *testing.T) {
	src := []byte(`{"label":"t0000001","candidate":"c0000","latency_s":2,"trace":[{"type":"phase","phase":"skill_dispatch"},{"type":"done","reply":"ok","finalized":true}]}`)
	o := Options{BuildDepth: 1, Keys: []string{"label", "candidate", "latency_s", "trace"}}
	Parse(src, o) // the pool's first parser
	if n := testing.AllocsPerRun(100, func() { Parse(src, o) }); n > 4 {
		t.Errorf("Parse of a turns line allocates %v times, want at most 4", n)
	}
}
