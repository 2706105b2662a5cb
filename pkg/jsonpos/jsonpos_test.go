package jsonpos

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
