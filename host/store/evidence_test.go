package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// insertOldRun inserts a run with the columns every schema version has.
func insertOldRun(tb testing.TB, s *Store) *Run {
	tb.Helper()
	r := &Run{Attempt: 1}
	err := s.db.QueryRowContext(context.Background(), s.Rebind(`INSERT INTO company_eval_runs
		(candidate, pack_sha256, pack_name, scorer_version, host_version, attempt, status, created_at, updated_at)
		VALUES ('c', 'p', '', 'v', '', 1, 'running', ?, ?) RETURNING id`), s.now(), s.now()).Scan(&r.ID)
	if err != nil {
		tb.Fatalf("insert old run: %v", err)
	}
	return r
}

func gzipBlob(tb testing.TB, kind string, raw []byte) Blob {
	tb.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return Blob{SHA256: hex.EncodeToString(sum[:]), Kind: kind, Size: int64(len(raw)), Data: buf.Bytes()}
}

// TestEvidenceStoredOncePerHash: a blob is stored once per sha256,
// compressed, and reads back as its uncompressed bytes.
func TestEvidenceStoredOncePerHash(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, b.open(t))
			raw := bytes.Repeat([]byte(`{"type":"tool_call","name":"x"}`+"\n"), 200)
			blob := gzipBlob(t, BlobTrace, raw)
			for range 2 {
				if err := s.PutBlobs(ctx, []Blob{blob, blob}); err != nil {
					t.Fatalf("PutBlobs() = %v", err)
				}
			}
			got, err := s.ReadBlob(ctx, blob.SHA256)
			if err != nil {
				t.Fatalf("ReadBlob() = %v", err)
			}
			if !bytes.Equal(got, raw) {
				t.Errorf("ReadBlob() = %d bytes, want the %d stored", len(got), len(raw))
			}
			st, err := s.EvidenceStats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := BlobStats{Blobs: 1, Size: int64(len(raw)), Compressed: int64(len(blob.Data))}
			if diff := cmp.Diff(want, st); diff != "" {
				t.Errorf("EvidenceStats() (-want +got):\n%s", diff)
			}
			if st.Compressed >= st.Size {
				t.Errorf("stored %d bytes for %d: not compressed", st.Compressed, st.Size)
			}
			if _, err := s.OpenBlob(ctx, "nope"); !errors.Is(err, ErrNotFound) {
				t.Errorf("OpenBlob(nope) = %v, want ErrNotFound", err)
			}
		})
	}
}

// TestEvidenceOnOldDatabase: a database from before migration 4 keeps its
// runs, turns and snapshots; old turns have no evidence references and an
// old snapshot is read as evidence.
func TestEvidenceOnOldDatabase(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.open(t)
			old := openStore(t, dsn)
			migrateOnlyTo(ctx, t, old, 4) // before evidence (migration 5)
			run := insertOldRun(t, old)
			if _, err := old.db.ExecContext(ctx, old.Rebind(`INSERT INTO company_eval_turns (run_id, label, attempt, status, created_at, state_after_sha256)
				VALUES (?, 't', 1, 'scored', ?, 'snap')`), run.ID, old.now()); err != nil {
				t.Fatal(err)
			}
			if err := old.PutSnapshot(ctx, "snap", []byte(`{"tasks":[]}`)); err != nil {
				t.Fatal(err)
			}
			old.Close()

			s := openStore(t, dsn)
			done, err := s.TurnsDone(ctx, run.ID, 1)
			if err != nil {
				t.Fatalf("TurnsDone() on a migrated database = %v", err)
			}
			if got := done[TurnKey{Label: "t", Epoch: 1}]; got.TraceSHA256 != "" || got.MetricsSHA256 != "" || got.StateAfterSHA256 != "snap" {
				t.Errorf("old turn after migration = %+v, want no trace or metrics reference", got)
			}
			r, err := s.RunByID(ctx, run.ID)
			if err != nil || string(r.Units) != "{}" {
				t.Errorf("RunByID() = %s, %v; want units {}", r.Units, err)
			}
			rc, err := s.OpenBlob(ctx, "snap")
			if err != nil {
				t.Fatalf("OpenBlob(old snapshot) = %v", err)
			}
			got, _ := io.ReadAll(rc)
			if string(got) != `{"tasks":[]}` {
				t.Errorf("OpenBlob(old snapshot) = %q", got)
			}
		})
	}
}
