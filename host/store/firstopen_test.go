package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Environment of a first-open child process (see TestFirstOpenProcess).
const (
	firstOpenDSNEnv   = "ASSAY_STORE_FIRSTOPEN_DSN"
	firstOpenEnumEnv  = "ASSAY_STORE_FIRSTOPEN_ENUM"
	firstOpenStartEnv = "ASSAY_STORE_FIRSTOPEN_START" // Unix nanoseconds to wait for
)

// installed is an installed scorer set with a private scorer: a new
// database must start with it, never with the built-in six.
var installed = append([]string{"acme_invoice"}, builtinIDs...)

// TestFirstOpenRace (issue 12 item 9) opens one new database from several
// goroutines and two other OS processes at the same moment, each asking for
// the installed scorer set as the CHECK of a new database. Every opener must
// succeed, exactly one must have created the database, and every one must
// read the installed set back, never the built-in one.
func TestFirstOpenRace(t *testing.T) {
	if os.Getenv(firstOpenDSNEnv) != "" {
		t.Skip("running as a first-open child")
	}
	const goroutines, processes = 8, 2
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.open(t)
			start := time.Now().Add(2 * time.Second)
			cmds := make([]*exec.Cmd, processes)
			outs := make([][]byte, processes)
			errs := make([]error, processes)
			var wg sync.WaitGroup
			for i := range cmds {
				cmd := exec.Command(os.Args[0], "-test.run=^TestFirstOpenProcess$", "-test.count=1", "-test.v")
				cmd.Env = append(os.Environ(), firstOpenDSNEnv+"="+dsn,
					firstOpenEnumEnv+"="+strings.Join(installed, ","),
					firstOpenStartEnv+"="+strconv.FormatInt(start.UnixNano(), 10))
				cmds[i] = cmd
				wg.Add(1)
				go func() {
					defer wg.Done()
					outs[i], errs[i] = cmd.CombinedOutput()
				}()
			}
			type opened struct {
				created bool
				enum    []string
				err     error
			}
			results := make([]opened, goroutines)
			for i := range results {
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(time.Until(start))
					created, enum, err := firstOpen(dsn, installed)
					results[i] = opened{created, enum, err}
				}()
			}
			wg.Wait()

			creators := 0
			for i, r := range results {
				if r.err != nil {
					t.Errorf("goroutine %d: %v", i, r.err)
					continue
				}
				if r.created {
					creators++
				}
				if diff := cmp.Diff(installed, r.enum); diff != "" {
					t.Errorf("goroutine %d: ScorerEnum() (-want +got):\n%s", i, diff)
				}
			}
			for i, out := range outs {
				if errs[i] != nil {
					t.Errorf("process %d: %v\n%s", i, errs[i], out)
					continue
				}
				created, enum, ok := parseChild(string(out))
				if !ok {
					t.Errorf("process %d printed no result:\n%s", i, out)
					continue
				}
				if created {
					creators++
				}
				if diff := cmp.Diff(installed, enum); diff != "" {
					t.Errorf("process %d: ScorerEnum() (-want +got):\n%s", i, diff)
				}
			}
			if creators != 1 {
				t.Errorf("%d openers report Created(), want exactly 1", creators)
			}
		})
	}
}

// firstOpen opens dsn asking for enum as a new database's CHECK and reads
// the CHECK back.
func firstOpen(dsn string, enum []string) (created bool, got []string, err error) {
	ctx := context.Background()
	s, err := Open(ctx, dsn, WithScorerEnum(enum))
	if err != nil {
		return false, nil, err
	}
	defer s.Close()
	got, err = s.ScorerEnum(ctx)
	return s.Created(), got, err
}

// childResult is the line a first-open child prints.
const childResult = "first-open-result "

func parseChild(out string) (created bool, enum []string, ok bool) {
	for _, line := range strings.Split(out, "\n") {
		rest, found := strings.CutPrefix(strings.TrimSpace(line), childResult)
		if !found {
			continue
		}
		c, ids, _ := strings.Cut(rest, " ")
		return c == "created", strings.Split(ids, ","), true
	}
	return false, nil, false
}

// TestFirstOpenProcess is the child of TestFirstOpenRace; it does nothing
// unless that test started it.
func TestFirstOpenProcess(t *testing.T) {
	dsn := os.Getenv(firstOpenDSNEnv)
	if dsn == "" {
		t.Skip("only runs as a child of TestFirstOpenRace")
	}
	at, err := strconv.ParseInt(os.Getenv(firstOpenStartEnv), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(time.Unix(0, at)))
	created, enum, err := firstOpen(dsn, strings.Split(os.Getenv(firstOpenEnumEnv), ","))
	if err != nil {
		t.Fatal(err)
	}
	c := "opened"
	if created {
		c = "created"
	}
	fmt.Printf("%s%s %s\n", childResult, c, strings.Join(enum, ","))
}

// TestFirstOpenOnlyNewDatabases: WithScorerEnum sets the CHECK of a database
// the Open creates and leaves an existing one as it is.
func TestFirstOpenOnlyNewDatabases(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.open(t)
			created, enum, err := firstOpen(dsn, nil)
			if err != nil || !created {
				t.Fatalf("first Open() = created %v, %v; want created", created, err)
			}
			if diff := cmp.Diff(builtinIDs, enum); diff != "" {
				t.Errorf("Open() without WithScorerEnum: ScorerEnum() (-want +got):\n%s", diff)
			}
			created, enum, err = firstOpen(dsn, installed)
			if err != nil || created {
				t.Fatalf("second Open() = created %v, %v; want opened", created, err)
			}
			if diff := cmp.Diff(builtinIDs, enum); diff != "" {
				t.Errorf("Open(WithScorerEnum) of an existing database changed its enum (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFirstOpenRetriesBusySQLite: a new SQLite file whose write lock another
// connection holds past the busy timeout is opened once the lock is
// released, and the Store says it retried.
func TestFirstOpenRetriesBusySQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "busy.db")
	holder, err := sql.Open("sqlite", sqliteDSN(path, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	release := time.AfterFunc(400*time.Millisecond, func() { conn.ExecContext(ctx, "COMMIT") })
	defer release.Stop()

	s, err := Open(ctx, path, WithScorerEnum(installed), withSQLiteTimeouts(50*time.Millisecond, 10*time.Second))
	if err != nil {
		t.Fatalf("Open(%q) while another connection held the lock = %v", path, err)
	}
	defer s.Close()
	if s.OpenRetries() == 0 {
		t.Errorf("OpenRetries() = 0, want > 0: the lock was held past the busy timeout")
	}
	enum, err := s.ScorerEnum(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(installed, enum); diff != "" {
		t.Errorf("ScorerEnum() (-want +got):\n%s", diff)
	}

	// With a budget shorter than the lock, Open gives up saying how often
	// it tried. An up-to-date database needs no lock, so first make this one
	// out of date by forgetting a migration.
	if _, err := conn.ExecContext(ctx, "DELETE FROM schema_migrations WHERE version = 2"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "COMMIT")
	_, err = Open(ctx, path, withSQLiteTimeouts(20*time.Millisecond, 200*time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "tried") {
		t.Errorf("Open(%q) with the lock held past the budget = %v, want an error saying how often it tried", path, err)
	}
}
