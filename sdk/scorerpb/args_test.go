package scorerpb

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var argSeeds = []string{
	`{}`, `{"q":"invoice","n":2,"ok":true,"x":null}`, ` { "a" : [1, -2.5e3, "s", [], {}, false] , "b":{"c":{"d":0.1}} } `,
	`{"html":"<a&b>","esc":"line\nbreak \"q\" \u00e9","uni":"café"}`, `{"n":1e400}`, `{"n":-0}`, `{"n":01}`, `{"n":1.}`,
	`{"a":1,}`, `{"a" 1}`, `[1]`, `null`, `{"a":1}x`, `{"a":tru}`, `{"dup":1,"dup":2}`, `{"big":12345678901234567890}`,
}

func TestArgsJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, src := range argSeeds {
		compareParse(t, []byte(src))
	}
	values := []map[string]any{
		{}, {"q": "x", "n": 2.0, "b": true, "z": nil}, {"i": 3, "j": int64(-4), "f": 1e-7, "g": 1e21},
		{"list": []any{"a", 1.5, []any{}, map[string]any{"k": "v"}}}, {"html": "<&>", "nl": "a\nb", "u": "é"},
		{"nan": math.NaN()}, {"inf": math.Inf(1)}, {"other": struct{ A int }{1}}, {"strs": []string{"a"}},
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
		if !cmp.Equal(a, b) {
			t.Errorf("AppendArgs(%v) = %s, reads back as %v, want %v", v, got, a, b)
		}
	}
}

func compareParse(t *testing.T, src []byte) {
	t.Helper()
	got, gotErr := ParseArgs(src)
	var want map[string]any
	wantErr := json.Unmarshal(src, &want)
	if want == nil && wantErr == nil {
		want = map[string]any{}
	}
	if (gotErr != nil) != (wantErr != nil) {
		t.Errorf("ParseArgs(%s) error = %v, encoding/json says %v", src, gotErr, wantErr)
		return
	}
	if gotErr == nil && !cmp.Equal(want, got) {
		t.Errorf("ParseArgs(%s) = %v, want %v", src, got, want)
	}
}

func FuzzParseArgs(f *testing.F) {
	for _, s := range argSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) { compareParse(t, src) })
}
