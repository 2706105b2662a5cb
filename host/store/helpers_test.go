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

// beginRun begins candidate "c"'s run of pack "p" (scorer version "v").
func beginRun(tb testing.TB, s *Store) *Run {
	tb.Helper()
	run, err := s.BeginRun(context.Background(), RunKey{Candidate: "c", PackSHA256: "p", ScorerVersion: "v"}, false)
	if err != nil {
		tb.Fatalf("BeginRun() = %v", err)
	}
	return run
}

var builtinIDs = []string{"answer_keywords", "composite", "memory_grounding", "stigmergic", "task_state", "tool_sequence"}
