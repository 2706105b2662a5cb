package taskeval

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"

	"github.com/assay-eval/assay/host/store"
)

// openSQLite returns a Store over a fresh SQLite file migrated with this
// package's own 002 migration only.
func openSQLite(t *testing.T) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "eval.db")
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ddl, err := os.ReadFile("../store/migrations/sqlite/002_taskeval.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(ddl)); err != nil {
		t.Fatalf("apply sqlite/002_taskeval.sql: %v", err)
	}
	return NewStore(db, nil)
}

// openPostgres returns a Store over a new, uniquely named schema of the
// server ASSAY_TEST_POSTGRES_URL names, migrated by host/store (so with
// postgres/002_taskeval.sql), or skips.
func openPostgres(t *testing.T) *Store {
	t.Helper()
	url := os.Getenv("ASSAY_TEST_POSTGRES_URL")
	if url == "" {
		t.Skip("ASSAY_TEST_POSTGRES_URL is not set; skipping the Postgres store tests")
	}
	ctx := context.Background()
	var b [6]byte
	rand.Read(b[:])
	schema := "taskeval_test_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, url)
		if err == nil {
			c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			c.Close(ctx)
		}
	})
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	st, err := store.Open(ctx, url+sep+"search_path="+schema)
	if err != nil {
		t.Fatalf("store.Open(postgres schema %s): %v", schema, err)
	}
	t.Cleanup(func() { st.Close() })
	return NewStore(st.DB(), st.Rebind)
}

// forEachDB runs fn against SQLite and, when configured, Postgres.
func forEachDB(t *testing.T, fn func(t *testing.T, s *Store)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, openSQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, openPostgres(t))
	})
}

// runAt creates a run and drives it to status via allowed transitions.
func runAt(t *testing.T, s *Store, status RunStatus) *Run {
	t.Helper()
	ctx := context.Background()
	run, err := s.CreateRun(ctx, "FN-1")
	if err != nil {
		t.Fatal(err)
	}
	path := map[RunStatus][]RunStatus{
		RunPending:   nil,
		RunRunning:   {RunRunning},
		RunCompleted: {RunRunning, RunCompleted},
		RunFailed:    {RunRunning, RunFailed},
		RunCancelled: {RunCancelled},
	}[status]
	for _, st := range path {
		if run, err = s.SetStatus(ctx, run.ID, st, ""); err != nil {
			t.Fatal(err)
		}
	}
	return run
}

func TestStoreStatusTransitions(t *testing.T) {
	t.Parallel()
	all := []RunStatus{RunPending, RunRunning, RunCompleted, RunFailed, RunCancelled}
	allowed := map[[2]RunStatus]bool{
		{RunPending, RunRunning}: true, {RunPending, RunFailed}: true, {RunPending, RunCancelled}: true,
		{RunRunning, RunCompleted}: true, {RunRunning, RunFailed}: true, {RunRunning, RunCancelled}: true,
	}
	forEachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		for _, from := range all {
			for _, to := range all {
				run := runAt(t, s, from)
				got, err := s.SetStatus(ctx, run.ID, to, "boom")
				stored, rerr := s.Run(ctx, run.ID)
				if rerr != nil {
					t.Fatal(rerr)
				}
				if allowed[[2]RunStatus{from, to}] {
					if err != nil || got.Status != to || stored.Status != to || stored.Error != "boom" {
						t.Errorf("SetStatus(%s -> %s) = %v, %v (stored %s), want %s", from, to, got, err, stored.Status, to)
					}
					continue
				}
				var te *TransitionError
				if !errors.As(err, &te) || !errors.Is(err, ErrTransition) || te.From != from || te.To != to {
					t.Errorf("SetStatus(%s -> %s) error = %v, want a TransitionError", from, to, err)
				}
				if stored.Status != from {
					t.Errorf("after refused SetStatus(%s -> %s) the run is %s, want %s", from, to, stored.Status, from)
				}
				if from.Terminal() && !strings.Contains(err.Error(), "is terminal") {
					t.Errorf("SetStatus(%s -> %s) error = %v, want it to say the state is terminal", from, to, err)
				}
			}
		}
		if _, err := s.SetStatus(ctx, "er-missing", RunRunning, ""); !errors.Is(err, ErrRunNotFound) {
			t.Errorf("SetStatus(missing run) error = %v, want ErrRunNotFound", err)
		}
	})
}

func TestStoreEvents(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := runAt(t, s, RunCompleted) // created, running, completed: 1..3
		b := runAt(t, s, RunPending)   // created: 1
		if ev, err := s.AppendEvent(ctx, b.ID, "note", map[string]int{"n": 1}); err != nil || ev.Seq != 2 {
			t.Fatalf("AppendEvent() = %+v, %v, want seq 2", ev, err)
		}
		// Concurrent writers get distinct, gapless numbers.
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				if _, err := s.AppendEvent(ctx, a.ID, "note", map[string]int{"i": i}); err != nil {
					errs <- err
				}
			}(i)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("concurrent AppendEvent() error = %v", err)
		}
		evs, err := s.Events(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int
		var kinds []string
		for _, ev := range evs {
			seqs = append(seqs, ev.Seq)
			kinds = append(kinds, ev.Kind)
		}
		if diff := cmp.Diff([]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, seqs); diff != "" {
			t.Errorf("Events(a) seqs mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{EventCreated, EventStatus, EventStatus}, kinds[:3]); diff != "" {
			t.Errorf("Events(a) kinds mismatch (-want +got):\n%s", diff)
		}
		if string(evs[2].Payload) != `{"from":"running","to":"completed"}` {
			t.Errorf("Events(a)[2].Payload = %s, want the transition", evs[2].Payload)
		}
		if _, err := s.AppendEvent(ctx, "er-missing", "note", nil); !errors.Is(err, ErrRunNotFound) {
			t.Errorf("AppendEvent(missing run) error = %v, want ErrRunNotFound", err)
		}
	})
}

func TestStoreResults(t *testing.T) {
	t.Parallel()
	f, ai := loadExample(t)
	det, _, why := f.Scores()
	forEachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		run := runAt(t, s, RunRunning)
		bundle := BuildBundle(&f.Task, run.ID)
		first, err := Evaluate("FN-101", det, nil, why, bundle)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SaveResult(ctx, run.ID, first); err != nil {
			t.Fatalf("SaveResult(first) = %v", err)
		}
		second, err := Evaluate("FN-101", det, ai, why, bundle)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SaveResult(ctx, run.ID, second); err != nil {
			t.Fatalf("SaveResult(second) = %v", err)
		}
		got, err := s.Result(ctx, run.ID, "FN-101")
		if err != nil {
			t.Fatalf("Result() = %v", err)
		}
		if diff := cmp.Diff(second, got, cmpopts.IgnoreUnexported(EvidenceRef{}), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Result() after a second write mismatch (-want +got):\n%s", diff)
		}
		var n int
		if err := s.db.QueryRowContext(ctx, s.rebind("SELECT COUNT(*) FROM eval_task_results WHERE run_id = ?"), run.ID).Scan(&n); err != nil || n != 1 {
			t.Errorf("eval_task_results rows for the run = %d, %v, want 1", n, err)
		}
		// The stored JSON items carry exactly the contract's fields.
		var raw string
		if err := s.db.QueryRowContext(ctx, s.rebind("SELECT category_scores FROM eval_task_results WHERE run_id = ?"), run.ID).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"category", "deterministicScore", "aiScore", "finalScore", "weight", "band", "rationale", "evidence"} {
			if strings.Count(raw, `"`+k+`":`) < 3 {
				t.Errorf("category_scores %s lacks %q in every item", raw, k)
			}
		}
		if _, err := s.Result(ctx, run.ID, "FN-none"); !errors.Is(err, ErrResultNotFound) {
			t.Errorf("Result(missing) error = %v, want ErrResultNotFound", err)
		}
	})
}

func TestStoreSaveResultRejects(t *testing.T) {
	t.Parallel()
	f, _ := loadExample(t)
	det, _, why := f.Scores()
	forEachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		tests := []struct {
			name   string
			status RunStatus
			mutate func(r *Result)
			want   string
		}{
			{"21 commits", RunRunning, func(r *Result) {
				for i := 0; i < 21; i++ {
					r.EvidenceBundle.Commits = append(r.EvidenceBundle.Commits, Entry{ID: fmt.Sprintf("commit-%07d", i), Source: SourceCommits})
				}
			}, "commits exceeds limit"},
			{"wrong source order", RunRunning, func(r *Result) {
				o := r.EvidenceBundle.SourceOrder
				o[6], o[7] = o[7], o[6]
			}, "sourceOrder must be"},
			{"tampered final", RunRunning, func(r *Result) { r.CategoryScores[1].FinalScore++ }, "do not match the blend"},
			{"pending run", RunPending, func(r *Result) {}, "is pending"},
			{"completed run", RunCompleted, func(r *Result) {}, "is completed"},
		}
		for _, tt := range tests {
			run := runAt(t, s, tt.status)
			r, err := Evaluate("FN-101", det, nil, why, BuildBundle(&f.Task, run.ID))
			if err != nil {
				t.Fatal(err)
			}
			tt.mutate(r)
			if err := s.SaveResult(ctx, run.ID, r); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: SaveResult() = %v, want an error containing %q", tt.name, err, tt.want)
			}
			if _, err := s.Result(ctx, run.ID, "FN-101"); !errors.Is(err, ErrResultNotFound) {
				t.Errorf("%s: a rejected result was stored (Result() error = %v)", tt.name, err)
			}
		}
	})
}
