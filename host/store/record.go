package store

import (
	"context"
	"errors"
	"fmt"
)

// RecordTurns stores a chunk of scored turns and their evidence in one
// transaction, so a chunk is recorded whole or not at all: a blob already
// stored under its sha256 and a turn already stored under its key (run,
// label, epoch, attempt, revision) are left as they are, as PutBlobs and
// InsertTurns do. Invalid turns and blobs are refused before anything is
// written.
func (s *Store) RecordTurns(ctx context.Context, blobs []Blob, turns []TurnRow) error {
	if len(blobs) == 0 && len(turns) == 0 {
		return nil
	}
	for i := range blobs {
		if blobs[i].SHA256 == "" {
			return errors.New("store evidence: empty sha256")
		}
	}
	for i := range turns {
		if err := turns[i].check(); err != nil {
			return fmt.Errorf("store turns: %w", err)
		}
	}
	if s.dialect != Postgres {
		return s.sqliteRecord(ctx, blobs, turns)
	}
	now := s.now()
	stmts := append(pgBlobStatements(blobs, now), pgTurnStatements(turns, now)...)
	return s.pgExec(ctx, stmts)
}

// wrapf is "what: err".
func wrapf(what string, err error) error {
	return fmt.Errorf("%s: %w", what, err)
}
