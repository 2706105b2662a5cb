package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Blob kinds: what a piece of evidence is (docs/evidence.md).
const (
	BlobTrace    = "trace"
	BlobSnapshot = "snapshot"
	BlobMetrics  = "metrics"
)

// Blob encodings: traces and snapshots are gzip-compressed; a metrics row
// (a few hundred bytes, which gzip does not shrink) is stored as it is.
const (
	EncodingGzip     = "gzip"
	EncodingIdentity = "identity"
)

// Blob is one piece of evidence: Data is Size bytes whose sha256 is SHA256,
// encoded as Encoding (gzip when empty).
type Blob struct {
	SHA256   string
	Kind     string
	Encoding string
	Size     int64
	Data     []byte
}

// blobKey is how company_eval_blobs stores the key sha256 (migration
// 011_blob_keys): the 32 bytes a sha256 of 64 lowercase hex digits
// encodes (Digest), or the bytes of any other text. Every API names a blob
// by its hex sha256; only the table's key is stored this way, half the size.
func blobKey(sha256 string) []byte {
	return appendBlobKey(make([]byte, 0, len(sha256)/2), sha256) // never nil: an empty key is not NULL
}

// appendBlobKey appends blobKey(sha256) to dst.
func appendBlobKey(dst []byte, sha256 string) []byte {
	if d, ok := Digest(sha256); ok {
		return append(dst, d[:]...)
	}
	return append(dst, sha256...)
}

// Digest is the 32 bytes sha names when it is a sha256 in 64 lowercase hex
// digits, as every digest assay computes is.
func Digest(sha string) (d [32]byte, ok bool) {
	if len(sha) != 2*len(d) {
		return d, false
	}
	for i := range d {
		hi, lo := lowerHexValue[sha[2*i]], lowerHexValue[sha[2*i+1]]
		if hi|lo > 0x0f {
			return [32]byte{}, false
		}
		d[i] = hi<<4 | lo
	}
	return d, true
}

// lowerHexValue is the value of each lowercase hex digit, and 0xff for
// every other byte: Digest decodes and checks a digit in one look-up (it
// runs three times for every blob a verify records).
var lowerHexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c] = c - 'a' + 10
	}
	return t
}()

// blobsPerStatement bounds the keys of one query reading blobs.
const blobsPerStatement = 200

// PutBlobs stores blobs in one transaction, many rows per statement; a
// blob already stored under its sha256 is left as it is, so every distinct
// content is stored once.
func (s *Store) PutBlobs(ctx context.Context, blobs []Blob) error {
	return s.RecordTurns(ctx, blobs, nil)
}

// OpenBlob returns a reader of the uncompressed bytes stored under sha256: a
// blob, or a state snapshot stored before evidence was kept. An unknown key
// wraps ErrNotFound.
func (s *Store) OpenBlob(ctx context.Context, sha256 string) (io.ReadCloser, error) {
	var data []byte
	var enc string
	err := s.db.QueryRowContext(ctx, s.Rebind(`SELECT encoding, data FROM company_eval_blobs WHERE sha256 = ?`), blobKey(sha256)).Scan(&enc, &data)
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
	if enc == EncodingIdentity {
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("read evidence %s: %w", shortSHA(sha256), err)
	}
	return zr, nil
}

// OpenTrace returns a reader of a recorded turn's trace: the bytes the turn
// keptBy keeps itself (kept), since migration 013 a trace of at most 512
// bytes, else the blob sha256 names (OpenBlob). keptBy is a turn row's
// TraceKeptBy: 0 for a trace that is a blob (a longer one, one recorded
// before 013, a queued run's evidence), which is then read with one query.
// An unknown trace wraps ErrNotFound.
func (s *Store) OpenTrace(ctx context.Context, keptBy int64, sha256 string) (r io.ReadCloser, kept bool, err error) {
	if keptBy != 0 {
		var b []byte
		err := s.db.QueryRowContext(ctx, s.Rebind(`SELECT trace FROM company_eval_turns WHERE id = ?`), keptBy).Scan(&b)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, false, fmt.Errorf("read trace %s of turn %d: %w", shortSHA(sha256), keptBy, err)
		}
		if len(b) > 0 {
			return io.NopCloser(bytes.NewReader(b)), true, nil
		}
	}
	r, err = s.OpenBlob(ctx, sha256)
	return r, false, err
}

// ReadTrace is OpenTrace read whole.
func (s *Store) ReadTrace(ctx context.Context, keptBy int64, sha256 string) ([]byte, error) {
	r, _, err := s.OpenTrace(ctx, keptBy, sha256)
	return readWhole(r, err, sha256)
}

// ReadBlob is OpenBlob read whole.
func (s *Store) ReadBlob(ctx context.Context, sha256 string) ([]byte, error) {
	r, err := s.OpenBlob(ctx, sha256)
	return readWhole(r, err, sha256)
}

// readWhole reads and closes r, the evidence sha256 opened (or err).
func readWhole(r io.ReadCloser, err error, sha256 string) ([]byte, error) {
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

// ReadBlobs reads many blobs whole, by sha256, a few hundred per query; a
// key not stored is absent from the map.
func (s *Store) ReadBlobs(ctx context.Context, shas []string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(shas))
	for start := 0; start < len(shas); start += blobsPerStatement {
		chunk := shas[start:min(start+blobsPerStatement, len(shas))]
		args := make([]any, len(chunk))
		names := make(map[string]string, len(chunk)) // stored key -> sha256
		for i, sha := range chunk {
			k := blobKey(sha)
			args[i], names[string(k)] = k, sha
		}
		q := "SELECT sha256, encoding, data FROM company_eval_blobs WHERE sha256 IN (" +
			strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ") + ")"
		if err := s.readBlobRows(ctx, s.Rebind(q), args, names, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Store) readBlobRows(ctx context.Context, q string, args []any, names map[string]string, out map[string][]byte) error {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("read evidence: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key, data []byte
		var enc string
		if err := rows.Scan(&key, &enc, &data); err != nil {
			return fmt.Errorf("read evidence: %w", err)
		}
		sha := names[string(key)]
		if enc != EncodingIdentity {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err == nil {
				data, err = io.ReadAll(zr)
			}
			if err != nil {
				return fmt.Errorf("read evidence %s: %w", shortSHA(sha), err)
			}
		}
		out[sha] = data
	}
	return rows.Err()
}

// TurnMetrics returns the metrics rows of turns by their metrics_sha256
// (docs/evidence.md): the row a turn keeps itself — TurnRow.Metrics when
// it is set, or else the stored turn's, read by its ID (TurnsDone reads
// none), since migration 012 — or, for a turn that keeps none (recorded
// before 012, or recorded by a queue worker after its evidence was
// stored), the blob of that sha256. A row found in none of these places is
// absent from the map.
func (s *Store) TurnMetrics(ctx context.Context, turns []TurnRow) (map[string][]byte, error) {
	out := map[string][]byte{}
	byID := map[int64]string{} // turn ID -> metrics_sha256
	for i := range turns {
		t := &turns[i]
		switch {
		case t.MetricsSHA256 == "":
		case t.Metrics != nil:
			out[t.MetricsSHA256] = t.Metrics
		case t.ID != 0:
			byID[t.ID] = t.MetricsSHA256
		}
	}
	if err := s.keptMetrics(ctx, byID, out); err != nil {
		return nil, err
	}
	var shas []string
	for i := range turns {
		if sha := turns[i].MetricsSHA256; sha != "" {
			if _, ok := out[sha]; !ok {
				shas = append(shas, sha)
			}
		}
	}
	blobs, err := s.ReadBlobs(ctx, shas) // none to read: an empty map, no query
	if err != nil {
		return nil, err
	}
	for sha, data := range blobs {
		out[sha] = data
	}
	return out, nil
}

// keptMetrics adds to out the metrics rows the turns byID names keep
// themselves, by the metrics_sha256 byID gives each, a few hundred turns a
// query; a turn that keeps none (an empty column) adds nothing.
func (s *Store) keptMetrics(ctx context.Context, byID map[int64]string, out map[string][]byte) error {
	ids := slices.Collect(maps.Keys(byID))
	for start := 0; start < len(ids); start += blobsPerStatement {
		chunk := ids[start:min(start+blobsPerStatement, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		q := "SELECT id, metrics FROM company_eval_turns WHERE id IN (" +
			strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ") + ")"
		rows, err := s.db.QueryContext(ctx, s.Rebind(q), args...)
		if err != nil {
			return fmt.Errorf("read metrics rows: %w", err)
		}
		for rows.Next() {
			var id int64
			var data []byte
			if err := rows.Scan(&id, &data); err != nil {
				rows.Close()
				return fmt.Errorf("read metrics rows: %w", err)
			}
			if len(data) > 0 {
				out[byID[id]] = data
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("read metrics rows: %w", err)
		}
	}
	return nil
}
