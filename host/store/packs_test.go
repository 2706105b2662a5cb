package store

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUpsertPackTasksLeavesStoredRows: storing a pack's tasks again
// writes nothing (on SQLite the WAL does not grow; on Postgres no row gets
// a new version) and leaves every row as it was, created_at included; a
// task that differs from its stored row in any one field, or is new, is
// written and read back as given, the others are left. It fails when a
// field is left out of the comparison, or when the stored rows are not
// compared at all.
func TestUpsertPackTasksLeavesStoredRows(t *testing.T) {
	ctx := context.Background()
	base := func() []PackTask {
		var tasks []PackTask
		for i := range 300 {
			tasks = append(tasks, PackTask{PackSHA256: "pack", Company: "acme", Label: fmt.Sprintf("t%03d", i),
				Scorer: builtinIDs[i%len(builtinIDs)], Weight: float64(i%3) + 0.25, SliceTags: []string{"s", fmt.Sprint(i % 2)}})
		}
		tasks[5].SliceTags = nil
		tasks[6].Weight = 0
		return tasks
	}
	for _, tc := range []struct {
		name   string
		change func(t *PackTask)
	}{
		{"same", nil},
		{"company", func(t *PackTask) { t.Company = "other" }},
		{"scorer", func(t *PackTask) { t.Scorer = "tool_sequence" }},
		{"weight", func(t *PackTask) { t.Weight += 1e-12 }},
		{"negative zero weight", func(t *PackTask) { t.Weight = math.Copysign(0, -1) }},
		{"slice tags", func(t *PackTask) { t.SliceTags = []string{"s", "x"} }},
		{"no slice tags", func(t *PackTask) { t.SliceTags = nil }},
		{"new label", func(t *PackTask) { t.Label = "new" }},
	} {
		for _, b := range backends(t) {
			t.Run(tc.name+"/"+b.name, func(t *testing.T) {
				path := b.open(t) // SQLite: a plain file path, so path+"-wal" is its WAL
				s := openStore(t, path)
				tasks := base()
				if err := s.UpsertPackTasks(ctx, tasks); err != nil {
					t.Fatalf("UpsertPackTasks() = %v", err)
				}
				before := storedPackRows(t, s)
				var wal int64
				if b.name == "sqlite" {
					wal = fileSize(t, path+"-wal")
				}
				changed := -1
				if tc.change != nil {
					changed = 6 // weight 0, scorer task_state
					tc.change(&tasks[changed])
				}
				if err := s.UpsertPackTasks(ctx, tasks); err != nil {
					t.Fatalf("UpsertPackTasks(again) = %v", err)
				}
				after := storedPackRows(t, s)
				if changed < 0 && b.name == "sqlite" {
					if got := fileSize(t, path+"-wal"); got != wal {
						t.Errorf("storing the same tasks again: WAL %d -> %d bytes, want no write", wal, got)
					}
				}
				if changed >= 0 {
					label := tasks[changed].Label
					want := tasks[changed]
					if want.SliceTags == nil {
						want.SliceTags = []string{}
					}
					got, err := s.PackTasks(ctx, "pack")
					if err != nil {
						t.Fatalf("PackTasks() = %v", err)
					}
					found := false
					for _, g := range got {
						if g.Label == label {
							found = true
							if diff := cmp.Diff(want, g); diff != "" { // SQLite keeps -0 as 0, as it did
								t.Errorf("changed task %s (-want +got):\n%s", label, diff)
							}
						}
					}
					if !found {
						t.Errorf("changed task %s not stored", label)
					}
					delete(after, label)
					if tc.name != "new label" {
						delete(before, label)
					}
				}
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("rows left as they were (-before +after):\n%s", diff)
				}
			})
		}
	}
}

// storedPackRows is every column of company_eval_packs, by label; on
// Postgres with the row version's xmin, which an update changes.
func storedPackRows(tb testing.TB, s *Store) map[string]string {
	tb.Helper()
	q := `SELECT label, id || '|' || pack_sha256 || '|' || company || '|' || scorer || '|' ||
		quote(weight) || '|' || slice_tags || '|' || created_at FROM company_eval_packs`
	if s.Dialect() == Postgres {
		q = `SELECT label, id || '|' || pack_sha256 || '|' || company || '|' || scorer || '|' ||
			float8send(weight)::text || '|' || slice_tags || '|' || created_at::text || '|' || xmin::text FROM company_eval_packs`
	}
	rows, err := s.db.Query(q)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var label, row string
		if err := rows.Scan(&label, &row); err != nil {
			tb.Fatal(err)
		}
		out[label] = row
	}
	return out
}

func fileSize(tb testing.TB, path string) int64 {
	tb.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Size()
}
