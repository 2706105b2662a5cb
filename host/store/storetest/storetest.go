package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresEnv names the variable that points the Postgres tests at a server,
// e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const PostgresEnv = "ASSAY_TEST_POSTGRES_URL"

// Backend is one kind of database a test runs against.
type Backend struct {
	Name string // "sqlite" or "postgres"
	// DSN returns the --db value of a new, empty database of this backend.
	DSN func(tb testing.TB) string
}

// Backends returns SQLite and, when ASSAY_TEST_POSTGRES_URL is set,
// Postgres; without the variable it logs that the Postgres backend is
// skipped.
func Backends(tb testing.TB) []Backend {
	bs := []Backend{{Name: "sqlite", DSN: SQLite}}
	if os.Getenv(PostgresEnv) == "" {
		tb.Logf("%s is not set: skipping the Postgres backend", PostgresEnv)
		return bs
	}
	return append(bs, Backend{Name: "postgres", DSN: Postgres})
}

// SQLite returns the path of a new SQLite file in a temporary directory.
func SQLite(tb testing.TB) string {
	return filepath.Join(tb.TempDir(), "assay.db")
}

// Postgres creates a uniquely named schema on the server
// ASSAY_TEST_POSTGRES_URL names, drops it when the test ends, and returns a
// URL whose search_path is that schema. Without the variable the test is
// skipped, saying so.
func Postgres(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		tb.Skipf("%s is not set: skipping a Postgres test", PostgresEnv)
	}
	var buf [6]byte
	rand.Read(buf[:])
	schema := "assay_test_" + hex.EncodeToString(buf[:])
	exec(tb, base, "CREATE SCHEMA "+schema)
	tb.Cleanup(func() { exec(tb, base, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

func exec(tb testing.TB, url, sql string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatalf("connect to %s: %v", PostgresEnv, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}
