package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
)

// Blob kinds: what a piece of evidence is (docs/evidence.md).
const (
	BlobTrace    = "trace"
	BlobSnapshot = "snapshot"
	BlobMetrics  = "metrics"
)

// EncodingGzip is the one encoding blobs are stored in.
const EncodingGzip = "gzip"

// Blob is one piece of evidence: Data is the gzip of Size bytes whose
// sha256 is SHA256.
type Blob struct {
	SHA256 string
	Kind   string
	Size   int64
	Data   []byte
}

// PutBlobs stores blobs in one transaction; a blob already stored under its
// sha256 is left as it is, so every distinct content is stored once.
func (s *Store) PutBlobs(ctx context.Context, blobs []Blob) error {
	if len(blobs) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store evidence: begin: %w", err)
	}
	defer tx.Rollback()
	q := s.Rebind(`INSERT INTO company_eval_blobs (sha256, kind, encoding, size, data, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING`)
	now := s.now()
	for _, b := range blobs {
		if b.SHA256 == "" {
			return errors.New("store evidence: empty sha256")
		}
		if _, err := tx.ExecContext(ctx, q, b.SHA256, b.Kind, EncodingGzip, b.Size, b.Data, now); err != nil {
			return fmt.Errorf("store evidence %s: %w", shortSHA(b.SHA256), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store evidence: commit: %w", err)
	}
	return nil
}

// OpenBlob returns a reader of the uncompressed bytes stored under sha256: a
// blob, or a state snapshot stored before evidence was kept. An unknown key
// wraps ErrNotFound.
func (s *Store) OpenBlob(ctx context.Context, sha256 string) (io.ReadCloser, error) {
	var data []byte
	err := s.db.QueryRowContext(ctx, s.Rebind(`SELECT data FROM company_eval_blobs WHERE sha256 = ?`), sha256).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		err = s.db.QueryRowContext(ctx, s.Rebind(`SELECT json FROM company_eval_snapshots WHERE sha256 = ?`), sha256).Scan(&data)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("read evidence %s: %w", shortSHA(sha256), ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("read evidence %s: %w", shortSHA(sha256), err)
		}
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read evidence %s: %w", shortSHA(sha256), err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("read evidence %s: %w", shortSHA(sha256), err)
	}
	return zr, nil
}

// ReadBlob is OpenBlob read whole.
func (s *Store) ReadBlob(ctx context.Context, sha256 string) ([]byte, error) {
	r, err := s.OpenBlob(ctx, sha256)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read evidence %s: %w", shortSHA(sha256), err)
	}
	return b, nil
}

// BlobStats is how much evidence is stored.
type BlobStats struct {
	Blobs      int64
	Size       int64 // uncompressed bytes
	Compressed int64 // bytes stored
}

// EvidenceStats sums the stored blobs.
func (s *Store) EvidenceStats(ctx context.Context) (BlobStats, error) {
	var st BlobStats
	err := s.db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(size), 0), coalesce(sum(length(data)), 0)
		FROM company_eval_blobs`).Scan(&st.Blobs, &st.Size, &st.Compressed)
	if err != nil {
		return st, fmt.Errorf("read evidence stats: %w", err)
	}
	return st, nil
}
