package store

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
)

// TestSQLiteRecordingPragmas checks the settings recording relies on
// (docs/storage.md, "Recording") are in effect on every connection of a
// file database: WAL, synchronous NORMAL, temp_store MEMORY and the larger
// WAL checkpoint interval.
func TestSQLiteRecordingPragmas(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[string]string{
		"journal_mode":       "wal",
		"synchronous":        "1", // NORMAL
		"temp_store":         "2", // MEMORY
		"wal_autocheckpoint": strconv.Itoa(sqliteAutocheckpointPages),
		"foreign_keys":       "1",
	}
	for name, w := range want {
		var got string
		if err := s.DB().QueryRowContext(ctx, "PRAGMA "+name).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", name, err)
		}
		if got != w {
			t.Errorf("PRAGMA %s = %s, want %s", name, got, w)
		}
	}
}
