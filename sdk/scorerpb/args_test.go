package scorerpb

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var argSeeds = []string{
	`{}`, `{"q":"invoice","n":2,"ok":true,"x":null}`, ` { "a" : [1, -2.5e3, "s", [], {}, false] , "b":{"c":{"d":0.1}} } `,
	`{"html":"<a&b>","esc":"line\nbreak \"q\" \u00e9","uni":"café"}`, `{"n":1e400}`, `{"n":-0}`, `{"n":01}`, `{"n":1.}`,
	`{"a":1,}`, `{"a" 1}`, `[1]`, `null`, `{"a":1}x`, `{"a":tru}`, `{"dup":1,"dup":2}`, `{"big":12345678901234567890}`,
	// numbers on and off the integer path: the pre-boxed 0 to 255, signs,
	// -0, 15 and 16 digits, fractions and exponents of integers
	`{"a":0,"b":255,"c":256,"d":-1,"e":-0,"f":-255,"g":100.0,"h":1e2,"i":10E0}`,
	`{"a":999999999999999,"b":-999999999999999,"c":9999999999999999,"d":12345678901234567}`,
	// a string and a number with the same text, a key and a value alike
	`{"10":"10","n":10,"s":"n","t":"true","u":true}`,
}

func TestArgsJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, src := range argSeeds {
		compareParse(t, []byte(src), newShared())
	}
	values := []map[string]any{
		{}, {"q": "x", "n": 2.0, "b": true, "z": nil}, {"i": 3, "j": int64(-4), "f": 1e-7, "g": 1e21},
		{"list": []any{"a", 1.5, []any{}, map[string]any{"k": "v"}}}, {"html": "<&>", "nl": "a\nb", "u": "é"},
		{"nan": math.NaN()}, {"inf": math.Inf(1)}, {"other": struct{ A int }{1}}, {"strs": []string{"a"}},
		{"whole": 10.0, "neg": -3.0, "zero": 0.0, "negzero": math.Copysign(0, -1), "million": 1e6, "max": 999999999999999.0, "over": 1e15, "half": 2.5},
	}
	for _, v := range values {
		got, gotErr := AppendArgs(nil, v)
		want, wantErr := json.Marshal(v)
		if (gotErr != nil) != (wantErr != nil) {
			t.Errorf("AppendArgs(%v) error = %v, encoding/json says %v", v, gotErr, wantErr)
			continue
		}
		if gotErr != nil {
			continue
		}
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Errorf("AppendArgs(%v) = %s, not valid JSON: %v", v, got, err)
			continue
		}
		json.Unmarshal(want, &b)
		if !cmp.Equal(a, b, signedZero) {
			t.Errorf("AppendArgs(%v) = %s, reads back as %v, want %v", v, got, a, b)
		}
	}
}

// compareParse compares ParseArgs, and parseArgs sharing sh (as a batch
// shares it across its tool calls), with encoding/json. Signed zeros
// compare apart.
func compareParse(t *testing.T, src []byte, sh *shared) {
	t.Helper()
	var want map[string]any
	wantErr := json.Unmarshal(src, &want)
	if want == nil && wantErr == nil {
		want = map[string]any{}
	}
	for _, c := range []struct {
		name string
		sh   *shared
	}{{"ParseArgs", nil}, {"parseArgs, shared", sh}} {
		got, gotErr := parseArgs(src, c.sh)
		if (gotErr != nil) != (wantErr != nil) {
			t.Errorf("%s(%s) error = %v, encoding/json says %v", c.name, src, gotErr, wantErr)
			continue
		}
		if gotErr == nil && !cmp.Equal(want, got, signedZero) {
			t.Errorf("%s(%s) = %v, want %v", c.name, src, got, want)
		}
	}
}

// signedZero makes cmp tell 0 from -0, which == does not.
var signedZero = cmp.Comparer(func(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (a != a && b != b)
})

func TestParseArgsShared(t *testing.T) {
	t.Parallel()
	sh := newShared()
	for range 2 { // the second time every short string and box comes from sh
		for _, src := range argSeeds {
			compareParse(t, []byte(src), sh)
		}
	}
	// A shared box is the value, not a slot: the map a scorer changes is
	// its own.
	a, _ := parseArgs([]byte(`{"q":"x","n":1}`), sh)
	b, _ := parseArgs([]byte(`{"q":"x","n":1}`), sh)
	a["q"], a["n"] = "changed", 2.0
	if diff := cmp.Diff(map[string]any{"q": "x", "n": 1.0}, b); diff != "" {
		t.Errorf("parseArgs after changing another object's values (-want +got):\n%s", diff)
	}
}

// TestArgsParser: an ArgsParser used for many objects, and again once it
// has started afresh, decodes each as encoding/json does, and the maps it
// returns are each their own.
func TestArgsParser(t *testing.T) {
	t.Parallel()
	var ap ArgsParser
	check := func(src []byte) {
		t.Helper()
		var want map[string]any
		wantErr := json.Unmarshal(src, &want)
		if want == nil && wantErr == nil {
			want = map[string]any{}
		}
		got, gotErr := ap.Parse(src)
		if (gotErr != nil) != (wantErr != nil) || gotErr == nil && !cmp.Equal(want, got, signedZero) {
			t.Errorf("ArgsParser.Parse(%s) = %v, %v; encoding/json gives %v, %v", src, got, gotErr, want, wantErr)
		}
	}
	for range 2 {
		for _, src := range argSeeds {
			check([]byte(src))
		}
	}
	for i := range maxNames + 10 { // fills the shared strings, then starts afresh
		check(fmt.Appendf(nil, `{"k%d":"v%d","q":"x"}`, i, i))
	}
	a, _ := ap.Parse([]byte(`{"q":"x","n":1}`))
	b, _ := ap.Parse([]byte(`{"q":"x","n":1}`))
	a["q"], a["n"] = "changed", 2.0
	if diff := cmp.Diff(map[string]any{"q": "x", "n": 1.0}, b); diff != "" {
		t.Errorf("ArgsParser.Parse after changing another object's values (-want +got):\n%s", diff)
	}
}

func FuzzParseArgs(f *testing.F) {
	for _, s := range argSeeds {
		f.Add([]byte(s))
	}
	sh := newShared()
	f.Fuzz(func(t *testing.T, src []byte) { compareParse(t, src, sh) })
}
