package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
)

// RecordTurns stores a chunk of scored turns and their evidence in one
// transaction, so a chunk is recorded whole or not at all: a blob already
// stored under its sha256 and a turn already stored under its key (run,
// label, epoch, attempt, revision) are left as they are, as PutBlobs and
// InsertTurns do.
func (s *Store) RecordTurns(ctx context.Context, blobs []Blob, turns []TurnRow) error {
	if len(blobs) == 0 && len(turns) == 0 {
		return nil
	}
	for _, b := range blobs {
		if b.SHA256 == "" {
			return errors.New("store evidence: empty sha256")
		}
	}
	stmts, err := s.TurnInserts(turns)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store turns: begin: %w", err)
	}
	defer tx.Rollback()
	now := s.now()
	for start := 0; start < len(blobs); start += blobsPerStatement {
		chunk := blobs[start:min(start+blobsPerStatement, len(blobs))]
		args := make([]any, 0, 6*len(chunk))
		for _, b := range chunk {
			args = append(args, b.SHA256, b.Kind, cmp.Or(b.Encoding, EncodingGzip), b.Size, b.Data, now)
		}
		q := "INSERT INTO company_eval_blobs (sha256, kind, encoding, size, data, created_at) VALUES " +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?), ", len(chunk)), ", ") + " ON CONFLICT (sha256) DO NOTHING"
		if _, err := tx.ExecContext(ctx, s.Rebind(q), args...); err != nil {
			return fmt.Errorf("store evidence: %w", err)
		}
	}
	for _, st := range stmts {
		if _, err := tx.ExecContext(ctx, st.SQL, st.Args...); err != nil {
			return fmt.Errorf("store turns: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store turns: commit: %w", err)
	}
	return nil
}
