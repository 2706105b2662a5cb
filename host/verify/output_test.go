package verify

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestAppendIndentIsIndent: appendIndent of compact JSON is json.Indent's,
// on empty and nested objects and arrays and on strings that hold JSON's
// punctuation, escaped quotes and backslashes.
func TestAppendIndentIsIndent(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		`{}`, `[]`, `""`, `1`, `null`, `{"a":{}}`, `{"a":[]}`, `[{}]`, `[[]]`, `[[],{}]`, `{"a":[{},[],{"b":[1,2]}]}`,
		`{"a":"{[,:]}","b":"\"","c":"\\","d":"\\\"","e":"x\\\\"}`, `["\u003c\u0026\u003e","\u2028",":",","]`,
		`{"a":1,"b":true,"c":null,"d":-1.5e-7,"e":"é"}`, `[[[[["deep"]]]]]`,
	} {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(src), "  ", "  "); err != nil {
			t.Fatalf("json.Indent(%s) error = %v", src, err)
		}
		if got := appendIndent(nil, []byte(src), "  ", "  "); string(got) != want.String() {
			t.Errorf("appendIndent(%s) =\n%s\nwant json.Indent's\n%s", src, got, want.String())
		}
	}
}

// TestResultsJSONIsMarshalIndent: results.json holds each result as
// json.MarshalIndent writes it, for random results (those it refuses are
// refused by add as before), written over several calls of add.
func TestResultsJSONIsMarshalIndent(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(10, 16))
	dir := t.TempDir()
	w, err := newResultsWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("[")
	sep := "\n  "
	written := 0
	for range 40 {
		var rs []TurnResult
		for range r.IntN(100) {
			res := randomTurnResult(r)
			b, err := json.MarshalIndent(&res, "  ", "  ")
			if err != nil {
				if aerr := (&resultsWriter{}).add([]TurnResult{res}); aerr == nil {
					t.Fatalf("add(%+v) = nil, want MarshalIndent's error %v", res, err)
				}
				continue
			}
			rs = append(rs, res)
			want = append(append(want, sep...), b...)
			sep = ",\n  "
			written++
		}
		if err := w.add(rs); err != nil {
			t.Fatal(err)
		}
	}
	want = append(want, "\n]\n"...)
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("results.json of %d results differs from json.MarshalIndent's:\ngot  %.300s\nwant %.300s", written, got, want)
	}
	if written < 500 {
		t.Errorf("%d results written: the test no longer covers enough", written)
	}
}
