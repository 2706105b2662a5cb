package store

import (
	"context"
	"testing"

	"github.com/assay-eval/assay/host/store/storetest"
)

type backend struct {
	name string
	// open returns the DSN of a new, empty database of this backend.
	open func(tb testing.TB) string
}

// backends returns SQLite and, when ASSAY_TEST_POSTGRES_URL is set, Postgres.
func backends(tb testing.TB) []backend {
	var out []backend
	for _, b := range storetest.Backends(tb) {
		out = append(out, backend{name: b.Name, open: b.DSN})
	}
	return out
}

func openStore(tb testing.TB, dsn string) *Store {
	tb.Helper()
	s, err := Open(context.Background(), dsn)
	if err != nil {
		tb.Fatalf("Open(%q) = %v", dsn, err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

var builtinIDs = []string{"answer_keywords", "composite", "memory_grounding", "stigmergic", "task_state", "tool_sequence"}
