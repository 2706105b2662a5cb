package state

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks Parse never panics, every diagnostic has a position in
// the file, and a snapshot comes back exactly when there is no error.
func FuzzParse(f *testing.F) {
	src, err := os.ReadFile(filepath.Join("testdata", "after.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(src)
	f.Add([]byte(`{"tasks": [{"id": 1, "priority": "x"}], "memory": 3}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, src []byte) {
		snap, diags := Parse("f.json", src)
		for _, d := range diags {
			if d.Pos.Line < 1 || d.Pos.Col < 1 || d.Pos.File != "f.json" {
				t.Errorf("Parse(%q): diagnostic %v has no position", src, d)
			}
		}
		if (snap == nil) != diags.HasErrors() {
			t.Errorf("Parse(%q) = snapshot %v with errors %v", src, snap != nil, diags.HasErrors())
		}
	})
}
