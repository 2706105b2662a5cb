package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/assay-eval/assay/host/store/storetest"
)

// TestPostgresStalledConnection (issue 14 item 6): a Postgres that stops
// answering mid-run (a proxy that stops forwarding) ends the statement
// within the timeout with an error IsUnavailable recognises, and once the
// server is back the store reconnects on its own.
func TestPostgresStalledConnection(t *testing.T) {
	dsn := storetest.Postgres(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := storetest.NewProxy(t, u.Host)
	const timeout = time.Second
	ctx := context.Background()
	s, err := Open(ctx, proxy.URL(t, dsn), WithTimeout(timeout))
	if err != nil {
		t.Fatalf("Open through the proxy: %v", err)
	}
	defer s.Close()
	key := RunKey{Candidate: "c", PackSHA256: "p", ScorerVersion: "v"}
	if _, err := s.BeginRun(ctx, key, false); err != nil {
		t.Fatalf("BeginRun before the stall: %v", err)
	}

	proxy.Stall()
	start := time.Now()
	_, err = s.BeginRun(ctx, key, false)
	took := time.Since(start)
	if err == nil {
		t.Fatal("BeginRun on a stalled connection succeeded")
	}
	if !IsUnavailable(err) {
		t.Errorf("BeginRun on a stalled connection = %v, want IsUnavailable", err)
	}
	// One read waits timeout+readGrace; database/sql may try one more
	// connection, which the connect timeout ends.
	if limit := 2*(timeout+readGrace) + 2*time.Second; took > limit {
		t.Errorf("BeginRun on a stalled connection took %s, want at most %s", took, limit)
	}

	proxy.Recover()
	run, err := s.BeginRun(ctx, key, false)
	if err != nil {
		t.Fatalf("BeginRun after the proxy recovered: %v", err)
	}
	if run.Attempt != 1 {
		t.Errorf("BeginRun after recovery: attempt %d, want 1 (the same run resumed)", run.Attempt)
	}
}

// TestPostgresTimeoutSettings (issue 14 item 6): WithTimeout sets the
// connect, statement and idle-in-transaction timeouts, and the URL's own
// settings win.
func TestPostgresTimeoutSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url       string
		opts            []Option
		connect         time.Duration
		statement, idle string
	}{
		{"default", "postgres://h/db", nil, DefaultTimeout, "30000", "30000"},
		{"flag", "postgres://h/db", []Option{WithTimeout(5 * time.Second)}, 5 * time.Second, "5000", "5000"},
		{"url wins", "postgres://h/db?connect_timeout=7&statement_timeout=1234", []Option{WithTimeout(5 * time.Second)},
			7 * time.Second, "1234", "5000"},
		{"off", "postgres://h/db", []Option{WithTimeout(0)}, 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := pgx.ParseConfig(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			var o options
			for _, opt := range tt.opts {
				opt(&o)
			}
			applyTimeouts(cfg, o)
			if cfg.ConnectTimeout != tt.connect || cfg.RuntimeParams["statement_timeout"] != tt.statement ||
				cfg.RuntimeParams["idle_in_transaction_session_timeout"] != tt.idle {
				t.Errorf("applyTimeouts(%q) = connect %s, statement %q, idle %q; want %s, %q, %q", tt.url,
					cfg.ConnectTimeout, cfg.RuntimeParams["statement_timeout"], cfg.RuntimeParams["idle_in_transaction_session_timeout"],
					tt.connect, tt.statement, tt.idle)
			}
		})
	}
}

// TestIsUnavailable (issue 14 item 6): a lost database is told apart from a
// wrong statement.
func TestIsUnavailable(t *testing.T) {
	t.Parallel()
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"statement error", errors.New("syntax error"), false},
		{"not found", ErrNotFound, false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"undefined table", &pgconn.PgError{Code: "42P01"}, false},
		{"read timeout", fmt.Errorf("store turns: %w", timeout), true},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"reset", syscall.ECONNRESET, true},
		{"bad conn", driver.ErrBadConn, true},
		{"unexpected eof", io.ErrUnexpectedEOF, true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"statement timeout", &pgconn.PgError{Code: "57014"}, true},
		{"idle in transaction timeout", &pgconn.PgError{Code: "25P03"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
	}
	for _, tt := range tests {
		if got := IsUnavailable(tt.err); got != tt.want {
			t.Errorf("IsUnavailable(%s: %v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
