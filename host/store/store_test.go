package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assay-eval/assay/host/store/storetest"
)

func TestMigrations(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.open(t)
			ms, err := migrations(map[string]Dialect{"sqlite": SQLite, "postgres": Postgres}[b.name])
			if err != nil {
				t.Fatal(err)
			}
			var want []int
			for _, m := range ms {
				want = append(want, m.version)
			}
			for _, round := range []string{"from empty", "up to date"} {
				s, err := Open(ctx, dsn)
				if err != nil {
					t.Fatalf("%s: Open(%q) = %v", round, dsn, err)
				}
				got, err := s.Migrations(ctx)
				if err != nil {
					t.Fatalf("%s: Migrations() = %v", round, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: Migrations() (-want +got):\n%s", round, diff)
				}
				enum, err := s.ScorerEnum(ctx)
				if err != nil {
					t.Fatalf("%s: ScorerEnum() = %v", round, err)
				}
				if diff := cmp.Diff(builtinIDs, enum); diff != "" {
					t.Errorf("%s: ScorerEnum() (-want +got):\n%s", round, diff)
				}
				for _, table := range []string{"company_eval_packs", "company_eval_runs", "company_eval_turns", "company_eval_snapshots"} {
					var n int
					if err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
						t.Errorf("%s: table %s: %v", round, table, err)
					}
				}
				s.Close()
			}
		})
	}
}

func TestConcurrentOpen(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.open(t)
			errs := make(chan error, 4)
			for range 4 {
				go func() {
					s, err := Open(context.Background(), dsn)
					if err == nil {
						err = s.Close()
					}
					errs <- err
				}()
			}
			for range 4 {
				if err := <-errs; err != nil {
					t.Errorf("concurrent Open(%q) = %v", dsn, err)
				}
			}
		})
	}
}

func TestSyncScorerEnum(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, b.open(t))
			tasks := []PackTask{
				{PackSHA256: "aaaa1111", Company: "acme", Label: "t1", Scorer: "task_state", Weight: 1.25, SliceTags: []string{"release"}},
				{PackSHA256: "aaaa1111", Company: "acme", Label: "t2", Scorer: "stigmergic", Weight: 1},
				{PackSHA256: "bbbb2222", Company: "acme", Label: "t1", Scorer: "stigmergic", Weight: 2},
			}
			if err := s.UpsertPackTasks(ctx, tasks); err != nil {
				t.Fatalf("UpsertPackTasks() = %v", err)
			}

			// A scorer the enum does not allow is refused by name.
			err := s.UpsertPackTasks(ctx, []PackTask{{PackSHA256: "cccc", Label: "inv", Scorer: "acme_invoice", Weight: 1}})
			if !errors.Is(err, ErrScorerNotInEnum) || !strings.Contains(err.Error(), `"acme_invoice"`) {
				t.Fatalf("UpsertPackTasks(acme_invoice) = %v, want ErrScorerNotInEnum naming acme_invoice", err)
			}

			// Add a scorer (and one whose name needs quoting).
			added := append([]string{"acme_invoice", "it's"}, builtinIDs...)
			if err := s.SyncScorerEnum(ctx, added); err != nil {
				t.Fatalf("SyncScorerEnum(%v) = %v", added, err)
			}
			got, err := s.ScorerEnum(ctx)
			if err != nil {
				t.Fatalf("ScorerEnum() = %v", err)
			}
			want := []string{"acme_invoice", "answer_keywords", "composite", "it's", "memory_grounding", "stigmergic", "task_state", "tool_sequence"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ScorerEnum() after adding (-want +got):\n%s", diff)
			}
			if err := s.UpsertPackTasks(ctx, []PackTask{{PackSHA256: "cccc", Label: "inv", Scorer: "acme_invoice", Weight: 1}}); err != nil {
				t.Errorf("UpsertPackTasks(acme_invoice) after sync = %v", err)
			}
			// Every row survived (SQLite rebuilt the table).
			stored, err := s.PackTasks(ctx, "aaaa1111")
			if err != nil {
				t.Fatal(err)
			}
			wantStored := []PackTask{
				{PackSHA256: "aaaa1111", Company: "acme", Label: "t1", Scorer: "task_state", Weight: 1.25, SliceTags: []string{"release"}},
				{PackSHA256: "aaaa1111", Company: "acme", Label: "t2", Scorer: "stigmergic", Weight: 1, SliceTags: []string{}},
			}
			if diff := cmp.Diff(wantStored, stored); diff != "" {
				t.Errorf("PackTasks() after sync (-want +got):\n%s", diff)
			}
			if s.Dialect() == SQLite {
				var n int
				if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'ix_company_eval_packs_scorer'`).Scan(&n); err != nil || n != 1 {
					t.Errorf("index ix_company_eval_packs_scorer after rebuild: count %d, err %v; want 1", n, err)
				}
			}
			// The unique key still holds after the rebuild.
			if err := s.UpsertPackTasks(ctx, tasks[:1]); err != nil {
				t.Errorf("UpsertPackTasks(again) = %v", err)
			}
			var rows int
			if err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM company_eval_packs").Scan(&rows); err != nil || rows != 4 {
				t.Errorf("rows after re-upsert = %d (err %v), want 4", rows, err)
			}

			// Removing scorers still used by stored rows is refused, naming them.
			err = s.SyncScorerEnum(ctx, []string{"answer_keywords", "composite", "it's", "memory_grounding", "task_state", "tool_sequence"})
			var inUse *InUseError
			if !errors.As(err, &inUse) {
				t.Fatalf("SyncScorerEnum(without stigmergic, acme_invoice) = %v, want *InUseError", err)
			}
			wantRows := []PackTaskRef{
				{PackSHA256: "cccc", Label: "inv", Scorer: "acme_invoice"},
				{PackSHA256: "aaaa1111", Label: "t2", Scorer: "stigmergic"},
				{PackSHA256: "bbbb2222", Label: "t1", Scorer: "stigmergic"},
			}
			if diff := cmp.Diff(wantRows, inUse.Rows); diff != "" {
				t.Errorf("InUseError.Rows (-want +got):\n%s", diff)
			}
			for _, part := range []string{"pack aaaa1111 task t2: scorer stigmergic", "pack cccc task inv: scorer acme_invoice"} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("InUseError.Error() = %q, want it to contain %q", err.Error(), part)
				}
			}
			got, err = s.ScorerEnum(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ScorerEnum() after a refused sync changed (-want +got):\n%s", diff)
			}

			// Removing an unused scorer works.
			if err := s.SyncScorerEnum(ctx, append([]string{"acme_invoice"}, builtinIDs...)); err != nil {
				t.Fatalf("SyncScorerEnum(without it's) = %v", err)
			}
			got, _ = s.ScorerEnum(ctx)
			if diff := cmp.Diff(append([]string{"acme_invoice"}, builtinIDs...), got); diff != "" {
				t.Errorf("ScorerEnum() after removing it's (-want +got):\n%s", diff)
			}
			if err := s.SyncScorerEnum(ctx, nil); err == nil {
				t.Errorf("SyncScorerEnum(nil) = nil, want an error")
			}
		})
	}
}

func TestPostgresConstraintIsNormalised(t *testing.T) {
	dsn := storetest.Postgres(t)
	s := openStore(t, dsn)
	var def string
	if err := s.DB().QueryRow(`SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = $1 AND conrelid = to_regclass('company_eval_packs')`, ScorerConstraint).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def, "ANY (ARRAY[") {
		t.Fatalf("pg_get_constraintdef = %q, want the normalised = ANY (ARRAY[...]) form", def)
	}
	got, err := ParseScorerCheck(def)
	if err != nil {
		t.Fatalf("ParseScorerCheck(%q) = %v", def, err)
	}
	if diff := cmp.Diff(builtinIDs, got); diff != "" {
		t.Errorf("ParseScorerCheck(%q) (-want +got):\n%s", def, diff)
	}
}

func TestParseScorerCheck(t *testing.T) {
	tests := []struct {
		name, def string
		want      []string
		wantErr   bool
	}{
		{name: "sqlite in", def: `CHECK (scorer IN ('b', 'a'))`, want: []string{"a", "b"}},
		{name: "pg any array", def: `CHECK ((scorer = ANY (ARRAY['task_state'::text, 'composite'::text])))`, want: []string{"composite", "task_state"}},
		{name: "pg varchar cast", def: `CHECK (((scorer)::text = ANY ((ARRAY['a'::character varying, 'b'::character varying])::text[])))`, want: []string{"a", "b"}},
		{name: "pg one element", def: `CHECK ((scorer = 'only'::text))`, want: []string{"only"}},
		{name: "escaped quote", def: `CHECK ((scorer = ANY (ARRAY['it''s'::text, 'x'::text])))`, want: []string{"it's", "x"}},
		{name: "sqlite escaped quote", def: `CHECK (scorer IN ('it''s','a,b', 'p)q'))`, want: []string{"a,b", "it's", "p)q"}},
		{name: "E string", def: `CHECK ((scorer = ANY (ARRAY[E'back\\slash'::text])))`, want: []string{`back\slash`}},
		{name: "quoted column", def: `CHECK ("scorer" IN ('a'))`, want: []string{"a"}},
		{name: "lowercase", def: `check (scorer in ('a'))`, want: []string{"a"}},
		{name: "not a check", def: `UNIQUE (scorer)`, wantErr: true},
		{name: "other column", def: `CHECK (status IN ('a'))`, wantErr: true},
		{name: "no names", def: `CHECK (scorer IN ())`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseScorerCheck(tt.def)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseScorerCheck(%q) error = %v, wantErr %v", tt.def, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseScorerCheck(%q) (-want +got):\n%s", tt.def, diff)
			}
		})
	}
}

func TestParseTableScorerEnum(t *testing.T) {
	table := `CREATE TABLE "company_eval_packs" (
    id INTEGER PRIMARY KEY, -- a comment with CHECK (scorer IN ('nope'))
    scorer TEXT NOT NULL CHECK (length(scorer) > 0),
    CONSTRAINT uq UNIQUE (pack_sha256, label),
    CONSTRAINT "ck_company_eval_packs_scorer" CHECK (scorer IN ('x', 'it''s'))
)`
	got, err := ParseTableScorerEnum(table)
	if err != nil {
		t.Fatalf("ParseTableScorerEnum() = %v", err)
	}
	if diff := cmp.Diff([]string{"it's", "x"}, got); diff != "" {
		t.Errorf("ParseTableScorerEnum() (-want +got):\n%s", diff)
	}
	replaced, err := ReplaceScorerCheck(table, ScorerCheckSQL([]string{"y"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(replaced, `"ck_company_eval_packs_scorer" CHECK (scorer IN ('y'))`) || !strings.Contains(replaced, "length(scorer) > 0") {
		t.Errorf("ReplaceScorerCheck() = %s", replaced)
	}
	noCheck := "CREATE TABLE company_eval_packs (scorer TEXT)"
	if _, err := ParseTableScorerEnum(noCheck); !errors.Is(err, ErrNoScorerConstraint) {
		t.Errorf("ParseTableScorerEnum(%q) = %v, want ErrNoScorerConstraint", noCheck, err)
	}
	added, err := ReplaceScorerCheck(noCheck, ScorerCheckSQL([]string{"a"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ParseTableScorerEnum(added); err != nil || !cmp.Equal(got, []string{"a"}) {
		t.Errorf("ParseTableScorerEnum(%q) = %v, %v; want [a]", added, got, err)
	}
}

func TestRebind(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT ? , ?", "SELECT $1 , $2"},
		{"SELECT '?' , ?", "SELECT '?' , $1"},
		{`SELECT "a?" FROM t WHERE x = ? AND y = 'it''s?'`, `SELECT "a?" FROM t WHERE x = $1 AND y = 'it''s?'`},
	}
	for _, tt := range tests {
		if got := rebindDollar(tt.in); got != tt.want {
			t.Errorf("rebindDollar(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	s := &Store{dialect: SQLite}
	if got := s.Rebind("x = ?"); got != "x = ?" {
		t.Errorf("SQLite Rebind changed the query: %q", got)
	}
}

func TestRuns(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, b.open(t))
			key := RunKey{Candidate: "cand-a", PackSHA256: "pack1", PackName: "example", ScorerVersion: "sv1", HostVersion: "dev"}
			r1, err := s.BeginRun(ctx, key, false)
			if err != nil {
				t.Fatalf("BeginRun() = %v", err)
			}
			if r1.Attempt != 1 {
				t.Errorf("BeginRun() attempt = %d, want 1", r1.Attempt)
			}
			if err := s.FinishRun(ctx, r1.ID, RunCompleted, []byte(`{"n":3}`), nil); err != nil {
				t.Fatalf("FinishRun() = %v", err)
			}
			resumed, err := s.BeginRun(ctx, key, false)
			if err != nil {
				t.Fatal(err)
			}
			if resumed.ID != r1.ID || resumed.Attempt != 1 {
				t.Errorf("BeginRun(resume) = id %d attempt %d, want id %d attempt 1", resumed.ID, resumed.Attempt, r1.ID)
			}
			row, err := s.RunByID(ctx, r1.ID)
			if err != nil {
				t.Fatal(err)
			}
			if row.Status != RunRunning || string(row.Summary) != `{"n":3}` {
				t.Errorf("RunByID() after resume = status %q summary %s, want running with the old summary", row.Status, row.Summary)
			}
			fresh, err := s.BeginRun(ctx, key, true)
			if err != nil {
				t.Fatal(err)
			}
			if fresh.ID != r1.ID || fresh.Attempt != 2 {
				t.Errorf("BeginRun(fresh) = id %d attempt %d, want id %d attempt 2", fresh.ID, fresh.Attempt, r1.ID)
			}
			other, err := s.BeginRun(ctx, RunKey{Candidate: "cand-b", PackSHA256: "pack1", ScorerVersion: "sv1"}, true)
			if err != nil {
				t.Fatal(err)
			}
			if other.ID == r1.ID || other.Attempt != 1 {
				t.Errorf("BeginRun(new candidate, fresh) = id %d attempt %d, want a new run at attempt 1", other.ID, other.Attempt)
			}
			score := 0.5
			if err := s.InsertTurn(ctx, TurnRow{RunID: fresh.ID, Label: "t1", Attempt: 2, Status: TurnScored, TurnScore: &score}); err != nil {
				t.Fatal(err)
			}
			if err := s.FinishRun(ctx, fresh.ID, RunFailed, []byte(`{"n":1}`), []byte(`{"verdict":"FAIL"}`)); err != nil {
				t.Fatal(err)
			}
			runs, err := s.Runs(ctx, "pack1")
			if err != nil {
				t.Fatalf("Runs() = %v", err)
			}
			type brief struct {
				Candidate, Status, Summary, Verdict string
				Attempt, Turns                      int
			}
			var got []brief
			for _, r := range runs {
				got = append(got, brief{r.Candidate, r.Status, string(r.Summary), string(r.Verdict), r.Attempt, r.Turns})
			}
			want := []brief{
				{"cand-a", RunFailed, `{"n":1}`, `{"verdict":"FAIL"}`, 2, 1},
				{"cand-b", RunRunning, "", "", 1, 0},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Runs() (-want +got):\n%s", diff)
			}
			if runs, _ := s.Runs(ctx, "other"); len(runs) != 0 {
				t.Errorf("Runs(other) = %v, want none", runs)
			}
			if _, err := s.RunByID(ctx, 99999); !errors.Is(err, ErrNotFound) {
				t.Errorf("RunByID(99999) = %v, want ErrNotFound", err)
			}
			if err := s.FinishRun(ctx, r1.ID, "bogus", nil, nil); err == nil {
				t.Errorf("FinishRun(bogus) = nil, want an error")
			}
		})
	}
}

func TestTurns(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, b.open(t))
			run := beginRun(t, s)
			score := 0.75
			process, kpi := 0.9, 0.5
			first := TurnRow{RunID: run.ID, Label: "t0", Epoch: 1, Attempt: 1, Revision: 1, InputKey: "k1", Status: TurnScored, ProcessScore: &process, KPIScore: &kpi,
				TurnScore: &score, Checks: []byte(`[{"kpi":"x","score":1}]`), FailureTags: []byte(`["tool_missing"]`),
				ScorerID: "task_state", ScorerSHA256: "abc", StateBeforeSHA256: "s1", StateAfterSHA256: "s2",
				Result: []byte(`{"label":"t0"}`)}
			for i, want := range []bool{true, false} {
				got, err := s.InsertTurnOnce(ctx, first)
				if err != nil || got != want {
					t.Errorf("InsertTurnOnce() #%d = %v, %v; want %v, nil", i+1, got, err, want)
				}
			}
			var batch []TurnRow
			for i := range 450 {
				batch = append(batch, TurnRow{RunID: run.ID, Label: fmt.Sprintf("t%d", i), Attempt: 1, Status: TurnUnscored})
			}
			if err := s.InsertTurns(ctx, batch); err != nil {
				t.Fatalf("InsertTurns() = %v", err)
			}
			if err := s.InsertTurns(ctx, batch[:10]); err != nil {
				t.Fatalf("InsertTurns(again) = %v", err)
			}
			done, err := s.TurnsDone(ctx, run.ID, 1)
			if err != nil {
				t.Fatalf("TurnsDone() = %v", err)
			}
			if len(done) != 450 {
				t.Errorf("TurnsDone() has %d turns, want 450", len(done))
			}
			ignore := cmpopts.IgnoreFields(TurnRow{}, "ID", "CreatedAt")
			if diff := cmp.Diff(first, done[TurnKey{Label: "t0", Epoch: 1}], ignore); diff != "" {
				t.Errorf("TurnsDone()[t0] (-want +got):\n%s", diff)
			}
			if done[TurnKey{Label: "t0", Epoch: 1}].CreatedAt.IsZero() {
				t.Errorf("TurnsDone()[t0].CreatedAt is zero")
			}
			wantT1 := TurnRow{RunID: run.ID, Label: "t1", Epoch: 1, Attempt: 1, Revision: 1, Status: TurnUnscored,
				Checks: []byte("[]"), FailureTags: []byte("[]"), Result: []byte("{}")}
			if diff := cmp.Diff(wantT1, done[TurnKey{Label: "t1", Epoch: 1}], ignore); diff != "" {
				t.Errorf("TurnsDone()[t1] (-want +got):\n%s", diff)
			}
			if other, _ := s.TurnsDone(ctx, run.ID, 2); len(other) != 0 {
				t.Errorf("TurnsDone(attempt 2) = %d turns, want 0", len(other))
			}
			if err := s.InsertTurn(ctx, TurnRow{RunID: run.ID, Label: "x", Attempt: 1, Status: "done"}); err == nil {
				t.Errorf("InsertTurn(status done) = nil, want an error")
			}

			if err := s.PutSnapshot(ctx, "sha1", []byte(`{"tasks":[]}`)); err != nil {
				t.Fatalf("PutSnapshot() = %v", err)
			}
			if err := s.PutSnapshot(ctx, "sha1", []byte(`{"tasks":[]}`)); err != nil {
				t.Fatalf("PutSnapshot(again) = %v", err)
			}
			snap, err := s.Snapshot(ctx, "sha1")
			if err != nil || string(snap) != `{"tasks":[]}` {
				t.Errorf("Snapshot(sha1) = %s, %v", snap, err)
			}
			if _, err := s.Snapshot(ctx, "nope"); !errors.Is(err, ErrNotFound) {
				t.Errorf("Snapshot(nope) = %v, want ErrNotFound", err)
			}
		})
	}
}

// Issue 12 item 2: a turn scored again is stored as its next revision; the
// latest revision is the turn's result, the earlier ones stay, and a run
// counts the turn once.
func TestTurnRevisions(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, b.open(t))
			run := beginRun(t, s)
			for rev, key := range []string{"k1", "k2"} {
				row := TurnRow{RunID: run.ID, Label: "t", Attempt: 1, Revision: rev + 1, InputKey: key, Status: TurnScored}
				if err := s.InsertTurns(ctx, []TurnRow{row}); err != nil {
					t.Fatalf("InsertTurns(revision %d) = %v", rev+1, err)
				}
			}
			done, err := s.TurnsDone(ctx, run.ID, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := done[TurnKey{Label: "t", Epoch: 1}]; got.Revision != 2 || got.InputKey != "k2" {
				t.Errorf("TurnsDone()[t] = revision %d key %q, want 2 and k2", got.Revision, got.InputKey)
			}
			revs, err := s.TurnRevisions(ctx, run.ID, 1, "t")
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, r := range revs {
				keys = append(keys, fmt.Sprintf("%d:%s", r.Revision, r.InputKey))
			}
			if diff := cmp.Diff([]string{"1:k1", "2:k2"}, keys); diff != "" {
				t.Errorf("TurnRevisions() (-want +got):\n%s", diff)
			}
			rr, err := s.RunByID(ctx, run.ID)
			if err != nil || rr.Turns != 1 {
				t.Errorf("RunByID().Turns = %d, %v; want 1 (one turn, two revisions)", rr.Turns, err)
			}
		})
	}
}

// Issue 12 item 2: a database written before turn revisions existed opens,
// and its turns read back as revision 1 with no input key.
func TestTurnRevisionsOnOldDatabase(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.open(t)
			old := openStore(t, dsn)
			// Take the database back to before migration 3.
			migrateOnlyTo(ctx, t, old, 2)
			run := insertOldRun(t, old)
			if _, err := old.db.ExecContext(ctx, old.Rebind(`INSERT INTO company_eval_turns (run_id, label, attempt, status, created_at)
				VALUES (?, 't', 1, 'scored', ?)`), run.ID, old.now()); err != nil {
				t.Fatal(err)
			}
			old.Close()

			s := openStore(t, dsn)
			done, err := s.TurnsDone(ctx, run.ID, 1)
			if err != nil {
				t.Fatalf("TurnsDone() on a migrated database = %v", err)
			}
			if got, ok := done[TurnKey{Label: "t", Epoch: 1}]; !ok || got.Revision != 1 || got.InputKey != "" {
				t.Errorf("old turn after migration = %+v, want revision 1 and no input key", got)
			}
			if err := s.InsertTurns(ctx, []TurnRow{{RunID: run.ID, Label: "t", Attempt: 1, Revision: 2, InputKey: "k", Status: TurnScored}}); err != nil {
				t.Errorf("InsertTurns(revision 2) on a migrated database = %v", err)
			}
		})
	}
}

// Issue 19 item 1: (label, epoch) identifies a turn of a run attempt; each
// epoch has its own revisions.
func TestTurnEpochs(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, b.open(t))
			run := beginRun(t, s)
			rows := []TurnRow{
				{RunID: run.ID, Label: "t", Attempt: 1, Revision: 1, InputKey: "e1", Status: TurnScored}, // epoch 0 is stored as 1
				{RunID: run.ID, Label: "t", Epoch: 2, Attempt: 1, Revision: 1, InputKey: "e2", Status: TurnScored},
				{RunID: run.ID, Label: "t", Epoch: 2, Attempt: 1, Revision: 2, InputKey: "e2b", Status: TurnScored},
			}
			if err := s.InsertTurns(ctx, rows); err != nil {
				t.Fatalf("InsertTurns(two epochs) = %v", err)
			}
			done, err := s.TurnsDone(ctx, run.ID, 1)
			if err != nil {
				t.Fatal(err)
			}
			got := map[TurnKey]string{}
			for k, r := range done {
				got[k] = fmt.Sprintf("%d:%s", r.Revision, r.InputKey)
			}
			want := map[TurnKey]string{{Label: "t", Epoch: 1}: "1:e1", {Label: "t", Epoch: 2}: "2:e2b"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("TurnsDone() (-want +got):\n%s", diff)
			}
			if rr, err := s.RunByID(ctx, run.ID); err != nil || rr.Turns != 1 {
				t.Errorf("RunByID().Turns = %d, %v; want 1 (one task)", rr.Turns, err)
			}
		})
	}
}

// Issue 19 item 1: a database written before epochs opens, its turns read
// back as epoch 1, and a second epoch of the same turn can be stored.
func TestTurnEpochsOnOldDatabase(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.open(t)
			old := openStore(t, dsn)
			migrateOnlyTo(ctx, t, old, 3) // before epochs
			run := insertOldRun(t, old)
			if _, err := old.db.ExecContext(ctx, old.Rebind(`INSERT INTO company_eval_turns (run_id, label, attempt, status, created_at, revision, input_key)
				VALUES (?, 't', 1, 'scored', ?, 2, 'k')`), run.ID, old.now()); err != nil {
				t.Fatal(err)
			}
			old.Close()

			s := openStore(t, dsn)
			done, err := s.TurnsDone(ctx, run.ID, 1)
			if err != nil {
				t.Fatalf("TurnsDone() on a migrated database = %v", err)
			}
			if got, ok := done[TurnKey{Label: "t", Epoch: 1}]; !ok || got.Revision != 2 || got.InputKey != "k" {
				t.Errorf("old turn after migration = %+v, want epoch 1, revision 2, key k", got)
			}
			if err := s.InsertTurns(ctx, []TurnRow{{RunID: run.ID, Label: "t", Epoch: 2, Attempt: 1, Revision: 2, InputKey: "k", Status: TurnScored}}); err != nil {
				t.Errorf("InsertTurns(epoch 2) on a migrated database = %v", err)
			}
			if done, _ := s.TurnsDone(ctx, run.ID, 1); len(done) != 2 {
				t.Errorf("TurnsDone() after storing epoch 2 = %d turns, want 2", len(done))
			}
		})
	}
}

// migrateOnlyTo takes s's database back to migration version last: it drops
// what Open made and applies only the migrations up to last.
func migrateOnlyTo(ctx context.Context, t *testing.T, s *Store, last int) {
	t.Helper()
	ms, err := migrations(s.dialect)
	if err != nil {
		t.Fatal(err)
	}
	// Every table but schema_migrations goes, whatever later migrations add.
	list := "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'"
	drop := "DROP TABLE %s"
	if s.dialect == Postgres {
		list = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'"
		drop = "DROP TABLE IF EXISTS %s CASCADE"
	}
	rows, err := s.db.QueryContext(ctx, list)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	for _, tb := range tables {
		if _, err := s.db.ExecContext(ctx, fmt.Sprintf(drop, tb)); err != nil {
			t.Fatalf("drop %s: %v", tb, err)
		}
	}
	if _, err := s.db.ExecContext(ctx, "DELETE FROM schema_migrations"); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.version > last {
			break
		}
		if _, err := s.db.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("apply %s: %v", m.name, err)
		}
		if _, err := s.db.ExecContext(ctx, s.Rebind("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"),
			m.version, m.name, s.now()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMigrationFailureNamesTheFile: a migration that fails (on Postgres,
// where they are sent as one script, found by applying them again one by
// one) is named in the error, and nothing of any migration is kept.
func TestMigrationFailureNamesTheFile(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := sql.Open(map[string]string{"sqlite": "sqlite", "postgres": "pgx"}[b.name], b.open(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			d := map[string]Dialect{"sqlite": SQLite, "postgres": Postgres}[b.name]
			s := newStore(db, d)
			ms, err := migrations(d)
			if err != nil {
				t.Fatal(err)
			}
			bad := migration{version: 999, name: "999_bad.sql", sql: "CREATE TABLE ok_so_far (x INTEGER);\nSELECT * FROM no_such_table"}
			err = s.applyMigrations(ctx, append(ms, bad), nil)
			if err == nil || !strings.HasPrefix(err.Error(), "migrate: apply 999_bad.sql: ") {
				t.Fatalf("applyMigrations(a bad migration) = %v, want migrate: apply 999_bad.sql: ...", err)
			}
			if got, err := s.Migrations(ctx); err == nil || len(got) != 0 {
				t.Errorf("Migrations() after a failed migration = %v, %v; want no schema_migrations table", got, err)
			}
			if err := s.applyMigrations(ctx, ms, nil); err != nil {
				t.Fatalf("applyMigrations(the real ones) = %v", err)
			}
			got, err := s.Migrations(ctx)
			if err != nil || len(got) != len(ms) {
				t.Errorf("Migrations() = %v, %v; want the %d versions", got, err, len(ms))
			}
		})
	}
}
