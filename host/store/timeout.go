package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultTimeout is how long assay waits for Postgres by default: to
// connect, for one statement, and for a transaction to go on while idle.
// docs/storage.md ("Timeouts and credentials") describes the rules.
const DefaultTimeout = 30 * time.Second

// readGrace is how much longer than the statement timeout the client waits
// for a reply before it gives the connection up: the server's own
// statement_timeout fires first when the server is there to fire it.
const readGrace = 2 * time.Second

// WithTimeout sets the Postgres timeouts (DefaultTimeout without it): the
// connect timeout, the server's statement_timeout and
// idle_in_transaction_session_timeout, and a client-side limit on how long
// one read or write on the connection may wait (d plus a grace), which ends
// a statement on a connection that stopped answering. A setting the URL
// gives (connect_timeout, statement_timeout,
// idle_in_transaction_session_timeout) wins over d. Zero turns all of them
// off. SQLite is local and keeps its busy timeout.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout, o.timeoutSet = d, true }
}

// applyTimeouts sets the timeouts of o on a parsed Postgres configuration.
func applyTimeouts(cfg *pgx.ConnConfig, o options) {
	d := DefaultTimeout
	if o.timeoutSet {
		d = o.timeout
	}
	if d <= 0 {
		return
	}
	if _, set := cfg.RuntimeParams["connect_timeout"]; !set && cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = d
	}
	ms := strconv.FormatInt(d.Milliseconds(), 10)
	for _, p := range []string{"statement_timeout", "idle_in_transaction_session_timeout"} {
		if _, set := cfg.RuntimeParams[p]; !set {
			cfg.RuntimeParams[p] = ms
		}
	}
	dial := cfg.DialFunc
	if dial == nil {
		dial = (&net.Dialer{KeepAlive: 5 * time.Minute}).DialContext
	}
	limit := d + readGrace
	if st, err := time.ParseDuration(cfg.RuntimeParams["statement_timeout"] + "ms"); err == nil && st > 0 {
		limit = st + readGrace
	}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &stallConn{Conn: c, limit: limit}, nil
	}
}

// stallConn is a connection on which no single read or write waits longer
// than limit: a server (or a proxy in front of it) that stops answering
// ends the statement with a timeout instead of hanging it. Deadlines the
// driver sets itself (to cancel a statement) are kept when earlier.
type stallConn struct {
	net.Conn
	limit time.Duration

	mu            sync.Mutex
	read, written time.Time // the driver's own deadlines; zero: none
}

func (c *stallConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	c.Conn.SetReadDeadline(earlier(c.read, time.Now().Add(c.limit)))
	c.mu.Unlock()
	return c.Conn.Read(b)
}

func (c *stallConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.Conn.SetWriteDeadline(earlier(c.written, time.Now().Add(c.limit)))
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *stallConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.read, c.written = t, t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *stallConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.read = t
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *stallConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.written = t
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

// earlier is the earlier of a (zero: none) and b.
func earlier(a, b time.Time) time.Time {
	if !a.IsZero() && a.Before(b) {
		return a
	}
	return b
}

// IsUnavailable reports whether err says the database itself is gone or
// stopped answering (a timeout, a refused or dropped connection, a server
// shutting down, a statement cancelled by its timeout) rather than that a
// statement was wrong. A rerun once the database is back can go on.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var netErr net.Error
	var pgErr *pgconn.PgError
	var connectErr *pgconn.ConnectError
	switch {
	case errors.As(err, &pgErr):
		// 08: connection exception; 57P0x: shutdown; 57014: statement
		// cancelled (by statement_timeout); 25P03: idle in transaction timeout.
		c := pgErr.Code
		return len(c) == 5 && (c[:2] == "08" || c[:4] == "57P0" || c == "57014" || c == "25P03")
	case errors.As(err, &connectErr), pgconn.Timeout(err), errors.As(err, &netErr):
		return true
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}
