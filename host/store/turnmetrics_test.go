package store

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTurnMetrics: a turn's metrics row is read from the turn when it keeps
// it and from the evidence table when it does not (a turn recorded before
// migration 012, or whose evidence was stored before it); a row kept in a
// turn is not also a blob, and a row stored nowhere is absent.
func TestTurnMetrics(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, b.open(t))
			migrateOnlyTo(ctx, t, s, 11)
			run := insertOldRun(t, s)
			old := rawBlob(BlobMetrics, []byte(`{"candidate":"c","label":"old"}`))
			if err := s.PutBlobs(ctx, []Blob{old}); err != nil {
				t.Fatalf("PutBlobs() = %v", err)
			}
			// A turn as an assay before 012 recorded it: the columns it had.
			if _, err := s.db.ExecContext(ctx, s.Rebind(`INSERT INTO company_eval_turns (run_id, label, attempt, status,
				checks, failure_tags, scorer_id, scorer_sha256, state_before_sha256, state_after_sha256, result, created_at,
				revision, input_key, epoch, trace_sha256, metrics_sha256)
				VALUES (?, 'old', 1, 'scored', '[]', '[]', 's', 'x', '', '', '{}', ?, 1, 'k', 1, 't', ?)`), run.ID, s.now(), old.SHA256); err != nil {
				t.Fatalf("insert turn before 012: %v", err)
			}
			if err := s.migrate(ctx, nil); err != nil {
				t.Fatalf("migrate() = %v", err)
			}
			kept := rawBlob(BlobMetrics, []byte(`{"candidate":"c","label":"new"}`))
			absent := rawBlob(BlobMetrics, []byte(`{"candidate":"c","label":"absent"}`))
			turns := []TurnRow{
				{RunID: run.ID, Label: "new", Attempt: 1, Status: TurnScored, TraceSHA256: "t", MetricsSHA256: kept.SHA256, Metrics: kept.Data},
				{RunID: run.ID, Label: "absent", Attempt: 1, Status: TurnScored, TraceSHA256: "t", MetricsSHA256: absent.SHA256},
				{RunID: run.ID, Label: "none", Attempt: 1, Status: TurnMissing},
			}
			if err := s.RecordTurns(ctx, nil, turns); err != nil {
				t.Fatalf("RecordTurns() = %v", err)
			}
			done, err := s.TurnsDone(ctx, run.ID, 1)
			if err != nil {
				t.Fatalf("TurnsDone() = %v", err)
			}
			// TurnsDone reads no metrics row, kept or not: TurnMetrics does.
			for k, row := range done {
				if row.Metrics != nil {
					t.Errorf("TurnsDone()[%v].Metrics = %q, want nil", k, row.Metrics)
				}
			}
			want := map[string][]byte{old.SHA256: old.Data, kept.SHA256: kept.Data}
			got, err := s.TurnMetrics(ctx, slices.Collect(maps.Values(done)))
			if err != nil {
				t.Fatalf("TurnMetrics(TurnsDone's rows) = %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("TurnMetrics(TurnsDone's rows) (-want +got):\n%s", diff)
			}
			// The rows with the metrics they keep (as TurnRevisions reads
			// them), and turns never stored (no ID) that carry their row.
			revs, err := s.TurnRevisions(ctx, run.ID, 1, "new")
			if err != nil {
				t.Fatalf("TurnRevisions() = %v", err)
			}
			if len(revs) != 1 || !bytes.Equal(revs[0].Metrics, kept.Data) {
				t.Fatalf("TurnRevisions(new) = %+v, want one turn keeping %q", revs, kept.Data)
			}
			carried := rawBlob(BlobMetrics, []byte(`{"candidate":"c","label":"carried"}`))
			rows := append(revs, done[TurnKey{Label: "old", Epoch: 1}], done[TurnKey{Label: "absent", Epoch: 1}],
				TurnRow{Label: "carried", MetricsSHA256: carried.SHA256, Metrics: carried.Data})
			got, err = s.TurnMetrics(ctx, rows)
			if err != nil {
				t.Fatalf("TurnMetrics(rows with their metrics) = %v", err)
			}
			want[carried.SHA256] = carried.Data
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("TurnMetrics(rows with their metrics) (-want +got):\n%s", diff)
			}
			if _, err := s.ReadBlob(ctx, kept.SHA256); !errors.Is(err, ErrNotFound) {
				t.Errorf("ReadBlob(a row kept in its turn) = %v, want ErrNotFound (not stored twice)", err)
			}
		})
	}
}

// TestTurnMetricsManyTurns: the metrics rows of 450 turns read from
// TurnsDone's rows — more than one query's worth, every other turn keeping
// its row and the others having it as a blob — are each turn's own.
func TestTurnMetricsManyTurns(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, b.open(t))
			run := beginRun(t, s)
			turns, blobs := recordChunk(run, 0, 450)
			if err := s.RecordTurns(ctx, blobs, turns); err != nil {
				t.Fatalf("RecordTurns() = %v", err)
			}
			want := map[string][]byte{}
			for _, b := range blobs {
				if b.Kind == BlobMetrics {
					want[b.SHA256] = b.Data
				}
			}
			for _, t := range turns {
				if t.Metrics != nil {
					want[t.MetricsSHA256] = t.Metrics
				}
			}
			done, err := s.TurnsDone(ctx, run.ID, run.Attempt)
			if err != nil {
				t.Fatalf("TurnsDone() = %v", err)
			}
			got, err := s.TurnMetrics(ctx, slices.Collect(maps.Values(done)))
			if err != nil {
				t.Fatalf("TurnMetrics() = %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("TurnMetrics() (-want +got):\n%s", diff)
			}
		})
	}
}
