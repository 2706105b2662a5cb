package e2e

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpgradeNote: a command that opens an existing database lacking a
// migration says on stderr, before it applies it, that it is upgrading the
// database (011_blob_keys copies the evidence table: minutes on a large
// database); a database it creates, or one up to date, gets no note.
func TestUpgradeNote(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "assay.db")
	const note = "note: upgrading the database"
	doctor := func() string {
		t.Helper()
		r := runRaw(t, "--db", db, "doctor")
		if r.code > 1 {
			t.Fatalf("assay doctor: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		return r.stderr
	}
	if se := runRaw(t, "--db", db, "scorers", "sync").stderr; strings.Contains(se, note) {
		t.Fatalf("creating the database gave the upgrade note:\n%s", se)
	}
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	// As a database an assay before 011 left: the migrations not recorded
	// (011 converts keys already converted to themselves) and the turns
	// without the columns 012 and 013 add.
	for _, q := range []string{"DELETE FROM schema_migrations WHERE version >= 11",
		"ALTER TABLE company_eval_turns DROP COLUMN metrics", "ALTER TABLE company_eval_turns DROP COLUMN trace"} {
		if _, err := conn.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	if se := doctor(); !strings.Contains(se, note) || !strings.Contains(se, "011_blob_keys.sql") {
		t.Errorf("opening a database lacking 011 gave no upgrade note naming it; stderr:\n%s", se)
	}
	if se := doctor(); strings.Contains(se, note) {
		t.Errorf("opening an up-to-date database gave the upgrade note:\n%s", se)
	}
}
