package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestInsideWithResolvedRoot: checking a path against a root resolved
// once (as the turns of a file or run directory carry it) refuses and
// admits exactly what resolving the root for every path does, with the
// root itself reached through a symbolic link and paths leaving it by
// .., by a link or by an absolute path; and the turns of an indexed turns
// file carry their root resolved.
func TestInsideWithResolvedRoot(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	run, out := filepath.Join(base, "run"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(run, "sub"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(run, "trace.ndjson"), "{}\n")
	writeFile(t, filepath.Join(out, "secret.ndjson"), "{}\n")
	for link, target := range map[string]string{
		filepath.Join(base, "linked"):        run,
		filepath.Join(run, "out.ndjson"):     filepath.Join(out, "secret.ndjson"),
		filepath.Join(run, "in.ndjson"):      "sub/../trace.ndjson",
		filepath.Join(run, "sub", "up"):      "..",
		filepath.Join(run, "dangling"):       filepath.Join(out, "nothing"),
		filepath.Join(run, "dangling-inner"): "nothing",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	for _, root := range []string{run, filepath.Join(base, "linked")} {
		real := resolveRoot(root)
		if want, _ := filepath.EvalSymlinks(root); real != want {
			t.Fatalf("resolveRoot(%s) = %q, want %q", root, real, want)
		}
		for _, rel := range []string{"trace.ndjson", "in.ndjson", "out.ndjson", "sub/up/trace.ndjson", "sub/../trace.ndjson",
			"../outside/secret.ndjson", "../run/trace.ndjson", "missing.ndjson", "dangling", "dangling-inner", out + "/secret.ndjson"} {
			path := rel
			if !filepath.IsAbs(rel) {
				path = root + "/" + rel
			}
			want, got := fmt.Sprint(inside(path, root, "")), fmt.Sprint(inside(path, root, real))
			if got != want {
				t.Errorf("inside(%s, %s) with the root resolved once = %s, resolved for the path %s", path, root, got, want)
			}
		}
	}
	turns := filepath.Join(base, "linked", "turns.jsonl")
	writeFile(t, turns, `{"label":"a","trace_file":"trace.ndjson"}`+"\n")
	in, _, err := ReadTurnsFile(turns, "")
	if err != nil || len(in) != 1 {
		t.Fatalf("ReadTurnsFile(%s) = %v, %v", turns, in, err)
	}
	specs, err := in[0].specs()
	if err != nil || len(specs) != 1 {
		t.Fatalf("specs() = %v, %v", specs, err)
	}
	if want := resolveRoot(filepath.Dir(turns)); specs[0].Root != filepath.Dir(turns) || specs[0].realRoot != want || want != run {
		t.Errorf("turn's root %q resolved %q, want %q resolved %q", specs[0].Root, specs[0].realRoot, filepath.Dir(turns), run)
	}
}

// TestChunkInsideIsInside: a chunk's cache of snapshot files found inside
// their root gives what inside gives, for each path and root apart (a
// path inside one root is not taken for inside another), and remembers
// only what was found inside.
func TestChunkInsideIsInside(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	run, sub := filepath.Join(base, "run"), filepath.Join(base, "run", "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(run, "before.json"), "{}")
	writeFile(t, filepath.Join(sub, "after.json"), "{}")
	c := &snapshotCache{}
	for range 3 {
		for _, tt := range []struct {
			path, root string
			want       bool
		}{
			{filepath.Join(run, "before.json"), run, true},
			{filepath.Join(run, "before.json"), sub, false},
			{filepath.Join(sub, "after.json"), sub, true},
			{filepath.Join(sub, "after.json"), run, true},
			{filepath.Join(sub, "..", "before.json"), sub, false},
			{filepath.Join(base, "elsewhere.json"), run, false},
		} {
			if got := c.inside(tt.path, tt.root, resolveRoot(tt.root)); got != tt.want {
				t.Errorf("snapshotCache.inside(%s, %s) = %v, want %v", tt.path, tt.root, got, tt.want)
			}
		}
	}
	if len(c.within) != 3 {
		t.Errorf("the cache holds %d paths found inside, want 3", len(c.within))
	}
}
