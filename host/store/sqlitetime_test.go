package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestSQLiteTimeText: the bulk inserts bind their one time as text they
// format once (sqliteTime); what is stored, and what reads back, is what
// the driver stores for the time.Time itself, on a plain database file and
// on one whose DSN sets the driver's own time format (where the text would
// differ, so the time is bound as it is), also when that parameter's name
// is percent-encoded in the DSN, as the driver decodes it; a parameter
// whose value only contains "_time" (busy_timeout) leaves the text on.
func TestSQLiteTimeText(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 23, 4, 5, 123456789, time.UTC) // as Store.now gives it
	for name, query := range map[string]string{"plain": "", "_time_format=sqlite": "?_time_format=sqlite", "escaped": "?%5Ftime_format=sqlite", "busy_timeout": "?_pragma=busy_timeout(100)"} {
		t.Run(name, func(t *testing.T) {
			s := openStore(t, filepath.Join(t.TempDir(), "assay.db")+query)
			s.now = func() time.Time { return at }
			if want := query == "" || name == "busy_timeout"; s.timeText != want {
				t.Errorf("timeText = %v with %q, want %v", s.timeText, query, want)
			}
			run := beginRun(t, s)
			turns, blobs := recordChunk(run, 0, 2)
			if _, err := s.InsertTurnOnce(ctx, turns[0]); err != nil { // binds the time.Time
				t.Fatal(err)
			}
			if err := s.RecordTurns(ctx, blobs, turns[1:]); err != nil { // binds sqliteTime
				t.Fatal(err)
			}
			if err := s.UpsertPackTasks(ctx, []PackTask{{PackSHA256: "p", Company: "co", Label: "a", Scorer: "answer_keywords", Weight: 1}}); err != nil {
				t.Fatal(err)
			}
			var want string
			if err := s.db.QueryRowContext(ctx, `SELECT typeof(created_at) || ' ' || created_at FROM company_eval_turns WHERE label = ?`, turns[0].Label).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if name != "plain" && name != "busy_timeout" && want == "text "+at.String() {
				t.Fatalf("the driver stored %q with %s: the test does not tell the two formats apart", want, query)
			}
			for _, q := range []string{
				`SELECT typeof(created_at) || ' ' || created_at FROM company_eval_turns WHERE label = '` + turns[1].Label + `'`,
				`SELECT typeof(created_at) || ' ' || created_at FROM company_eval_blobs LIMIT 1`,
				`SELECT typeof(created_at) || ' ' || created_at FROM company_eval_packs`,
			} {
				var got string
				if err := s.db.QueryRowContext(ctx, q).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("%s = %q, want %q (what the driver stores for the time.Time)", q, got, want)
				}
			}
			rows := storedTurns(t, s, run)
			for _, tr := range turns {
				got := rows[fmt.Sprintf("%s/%d/%d", tr.Label, tr.Epoch, tr.Revision)].CreatedAt
				if !got.Equal(at) {
					t.Errorf("turn %s reads back created at %v, want %v", tr.Label, got, at)
				}
			}
		})
	}
}
