package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestRedactEveryCredentialForm (issue 14 item 7): every way a database
// string carries a password is masked, and nothing else is changed.
func TestRedactEveryCredentialForm(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, dsn, want string }{
		{"url user info", "postgres://u:pw-secret@db:5432/x", "postgres://u:xxxxx@db:5432/x"},
		{"postgresql scheme", "postgresql://u:pw-secret@db/x", "postgresql://u:xxxxx@db/x"},
		{"at sign in password", "postgres://u:pw@-secret@db/x", "postgres://u:xxxxx@db/x"},
		{"query password", "postgres://u@db/x?sslmode=disable&password=pw-secret", "postgres://u@db/x?sslmode=disable&password=xxxxx"},
		{"escaped query key", "postgres://db/x?pass%77ord=pw-secret", "postgres://db/x?pass%77ord=xxxxx"},
		{"upper-case query key", "postgres://db/x?PASSWORD=pw-secret&a=b", "postgres://db/x?PASSWORD=xxxxx&a=b"},
		{"ssl password", "postgres://db/x?sslpassword=pw-secret", "postgres://db/x?sslpassword=xxxxx"},
		{"both", "postgres://u:pw-secret@db/x?password=pw-secret", "postgres://u:xxxxx@db/x?password=xxxxx"},
		{"keyword", "host=db user=u password=pw-secret dbname=x", "host=db user=u password=xxxxx dbname=x"},
		{"keyword quoted", "host=db password='pw-secret with space' dbname=x", "host=db password=xxxxx dbname=x"},
		{"keyword spaced", "host=db password = pw-secret", "host=db password=xxxxx"},
		{"no password", "postgres://u@db/x?sslmode=disable", "postgres://u@db/x?sslmode=disable"},
		{"sqlite path", "runs/assay.db", "runs/assay.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Redact(tt.dsn); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.dsn, got, tt.want)
			}
		})
	}
}

// TestRedactErrorQuotingTheSecret (issue 14 item 7): an error that quotes the
// password (raw, URL-encoded or decoded) or a whole database string is
// masked, and still unwraps to its cause.
func TestRedactErrorQuotingTheSecret(t *testing.T) {
	t.Parallel()
	cause := errors.New("cause")
	tests := []struct{ name, dsn, msg string }{
		{"raw password", "postgres://u:pw-s%40cret@db/x", "auth failed for pw-s@cret"},
		{"escaped password", "postgres://u:pw-s%40cret@db/x", "bad url postgres://u:pw-s%40cret@db/x"},
		{"query password", "postgres://db/x?password=pw-secret", "server said pw-secret"},
		{"another url", "postgres://db/x", "dial postgres://v:pw-secret@other/y?password=pw-secret: refused"},
		{"keyword in text", "postgres://db/x", "cannot parse host=db password=pw-secret"},
	}
	t.Run("url keeps its other parameters", func(t *testing.T) {
		t.Parallel()
		dsn := "postgres://u@h/x?password=pw-secret&connect_timeout=1"
		got := RedactError(errors.New("open "+dsn+": refused"), dsn).Error()
		if want := "open postgres://u@h/x?password=xxxxx&connect_timeout=1: refused"; got != want {
			t.Errorf("RedactError(%q) = %q, want %q", dsn, got, want)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := RedactError(fmt.Errorf("%s: %w", tt.msg, cause), tt.dsn)
			if strings.Contains(err.Error(), "pw-s") {
				t.Errorf("RedactError(%q) = %q, holds the password", tt.msg, err)
			}
			if !errors.Is(err, cause) {
				t.Errorf("RedactError(%q) no longer wraps its cause", tt.msg)
			}
		})
	}
}

// TestOpenRefusesKeywordDSN (issue 14 item 7): a keyword connection string
// is refused with a message naming the URL form, the message hides the
// password, and no SQLite file is created.
func TestOpenRefusesKeywordDSN(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, dsn := range []string{
		"host=db user=u password=pw-secret dbname=x",
		"dbname=x password=pw-secret",
		"user=u  sslmode=disable",
	} {
		s, err := Open(context.Background(), dsn)
		if err == nil {
			s.Close()
			t.Fatalf("Open(%q) = nil error, want ErrKeywordDSN", dsn)
		}
		if !errors.Is(err, ErrKeywordDSN) || !strings.Contains(err.Error(), "postgres://") {
			t.Errorf("Open(%q) = %v, want ErrKeywordDSN naming the URL form", dsn, err)
		}
		if strings.Contains(err.Error(), "pw-secret") {
			t.Errorf("Open(%q) = %q, holds the password", dsn, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("Open created %v, want no file", ents)
	}
}

// TestOpenPostgresErrorHidesPassword (issue 14 item 7): a Postgres that
// cannot be reached is reported without the URL's passwords.
func TestOpenPostgresErrorHidesPassword(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"postgres://u:pw-secret@127.0.0.1:1/x?connect_timeout=2",
		"postgres://u@127.0.0.1:1/x?password=pw-secret&connect_timeout=2",
		"postgres://u@127.0.0.1:1/x?password=pw-secret&connect_timeout=bad",
	} {
		_, err := Open(context.Background(), dsn)
		if err == nil {
			t.Fatalf("Open(%q) = nil error", dsn)
		}
		if strings.Contains(err.Error(), "pw-secret") {
			t.Errorf("Open(%q) = %q, holds the password", dsn, err)
		}
	}
}

// TestSQLiteURLSettingsRefused: a cache_size or wal_autocheckpoint in the
// database URL that is not an integer is refused at open, each named, all
// at once (SQLite itself would take it as 0 without a word); an integer of
// either sign opens.
func TestSQLiteURLSettingsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	_, err := Open(ctx, dir+"/bad.db?_pragma=wal_autocheckpoint(abc)&_pragma=cache_size=lots&_pragma=page_size(big)")
	if err == nil {
		t.Fatal("Open with wal_autocheckpoint(abc), cache_size=lots and page_size(big) = nil error")
	}
	for _, want := range []string{`wal_autocheckpoint = "abc"`, `cache_size = "lots"`, `page_size = "big"`, "want an integer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open error = %q, want it to hold %q", err, want)
		}
	}
	if _, statErr := os.Stat(dir + "/bad.db"); !os.IsNotExist(statErr) {
		t.Errorf("a refused URL made its database file: stat = %v", statErr)
	}
	for _, query := range []string{"?_pragma=wal_autocheckpoint(0)", "?_pragma=cache_size(-2000)", "?_pragma=wal_autocheckpoint( 500 )"} {
		s, err := Open(ctx, t.TempDir()+"/ok.db"+query)
		if err != nil {
			t.Errorf("Open(%s) = %v", query, err)
			continue
		}
		s.Close()
	}
}

// TestSQLiteURLSettingsKept: every pooled SQLite connection gets the
// store's page cache (sqliteCacheKiB) and WAL checkpoint interval
// (sqliteAutocheckpointPages), and a cache_size or wal_autocheckpoint in the
// database URL wins. The driver runs the _pragma list sorted, so each URL
// value here sorts before the store's ("-100)" < "-1000)", "(100)" <
// "(32768)"): were both given, the store's would win.
func TestSQLiteURLSettingsKept(t *testing.T) {
	t.Parallel()
	// Off Linux no syncer checkpoints beside the recorder: SQLite's own
	// checkpoint stays at the interval measured there.
	for goos, want := range map[string]int{"linux": 16384, "darwin": 4096, "windows": 4096} {
		if got := autocheckpointPages(goos); got != want {
			t.Errorf("autocheckpointPages(%q) = %d, want %d", goos, got, want)
		}
	}
	tests := []struct {
		name, pragma, file, query string
		want                      int
	}{
		{"cache default", "cache_size", "assay.db", "", -sqliteCacheKiB},
		{"cache from the url", "cache_size", "assay.db", "?_pragma=cache_size(-100)", -100},
		{"cache the word in the file name", "cache_size", "cache_size.db", "", -sqliteCacheKiB},
		{"checkpoint default", "wal_autocheckpoint", "assay.db", "", sqliteAutocheckpointPages},
		{"checkpoint from the url", "wal_autocheckpoint", "assay.db", "?_pragma=wal_autocheckpoint(100)", 100},
		{"checkpoint from the url, upper case", "wal_autocheckpoint", "assay.db", "?_pragma=WAL_AUTOCHECKPOINT(100)", 100},
		{"checkpoint the word in the file name", "wal_autocheckpoint", "wal_autocheckpoint.db", "", sqliteAutocheckpointPages},
		{"checkpoint with the cache from the url", "wal_autocheckpoint", "assay.db", "?_pragma=cache_size(-100)", sqliteAutocheckpointPages},
		{"checkpoint from the url, encoded", "wal_autocheckpoint", "assay.db", "?_pragma=wal%5Fautocheckpoint(100)", 100},
		{"checkpoint from the url, with the schema", "wal_autocheckpoint", "assay.db", "?_pragma=main.wal_autocheckpoint(100)", 100},
		{"checkpoint from the url, with =", "wal_autocheckpoint", "assay.db", "?_pragma=wal_autocheckpoint%3D100", 100},
		{"checkpoint only read in the url", "wal_autocheckpoint", "assay.db", "?_pragma=wal_autocheckpoint", sqliteAutocheckpointPages},
		{"page size default", "page_size", "assay.db", "", sqlitePageSize},
		{"page size from the url", "page_size", "assay.db", "?_pragma=page_size(4096)", 4096},
		{"page size with the journal mode from the url", "page_size", "assay.db", "?_journal_mode=WAL", sqlitePageSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, err := Open(ctx, t.TempDir()+"/"+tt.file+tt.query)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// Hold several connections at once so the pool opens more than one.
			var conns []interface{ Close() error }
			for i := 0; i < 3; i++ {
				c, err := s.DB().Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, c)
				var got int
				if err := c.QueryRowContext(ctx, "PRAGMA "+tt.pragma).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != tt.want {
					t.Errorf("connection %d: PRAGMA %s = %d, want %d", i, tt.pragma, got, tt.want)
				}
			}
			for _, c := range conns {
				c.Close()
			}
		})
	}
}
