package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"testing"
)

// TestSQLiteRecordingPragmas checks the settings recording relies on
// (docs/storage.md, "Recording") are in effect on every connection of a
// file database: WAL, synchronous NORMAL, temp_store MEMORY, the larger
// WAL checkpoint interval and the store's page size.
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
		"page_size":          strconv.Itoa(sqlitePageSize),
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

// TestSQLiteExistingPageSizeKept: a database made with SQLite's default
// 4 KiB pages (every database before the store's own page size) opens
// with its pages as they are, and the store's migrations run on it.
func TestSQLiteExistingPageSizeKept(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path+"?_pragma=page_size(4096)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE before_the_store (x)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var size, migrations int
	if err := s.DB().QueryRowContext(ctx, "PRAGMA page_size").Scan(&size); err != nil {
		t.Fatal(err)
	}
	if size != 4096 {
		t.Errorf("PRAGMA page_size of the existing database = %d, want its own 4096", size)
	}
	if err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations").Scan(&migrations); err != nil || migrations == 0 {
		t.Errorf("schema_migrations holds %d rows (%v), want the store's migrations", migrations, err)
	}
}
