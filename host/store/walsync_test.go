package store

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestWALSyncedWhileRecording: a SQLite file store syncs its WAL once
// walSyncBytes of rows are committed, not before and not at every commit,
// and everything recorded is in the database after Close, which removes
// the WAL. It fails when the syncer is not started, syncs another file, or
// is never asked.
func TestWALSyncedWhileRecording(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the WAL is synced in the background on Linux only")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	s := openStore(t, path)
	if s.wal == nil {
		t.Fatalf("Open(%q): no WAL syncer", path)
	}
	if want := path + "-wal"; s.wal.path != want {
		t.Fatalf("WAL syncer path = %q, want %q", s.wal.path, want)
	}
	run := beginRun(t, s)
	const chunk = 50
	turns, blobs := recordChunk(run, 0, chunk)
	per := recordBytes(blobs, turns)
	n := int(walSyncBytes/per) + 2 // chunks: past walSyncBytes once
	for c := range n {
		turns, blobs := recordChunk(run, c*chunk, chunk)
		if err := s.RecordTurns(ctx, blobs, turns); err != nil {
			t.Fatalf("RecordTurns(chunk %d) = %v", c, err)
		}
	}
	w := s.wal
	for deadline := time.Now().Add(10 * time.Second); w.syncs.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if got := w.syncs.Load(); got != 1 {
		t.Errorf("%d chunks of %d bytes of rows: %d syncs of the WAL, want 1", n, per, got)
	}
	if _, err := os.Stat(path + "-wal"); !os.IsNotExist(err) {
		t.Errorf("after Close: stat WAL = %v, want not exist", err)
	}
	s = openStore(t, path)
	if got, want := len(storedTurns(t, s, run)), n*chunk; got != want {
		t.Errorf("after reopening: %d turns stored, want %d", got, want)
	}
}

// TestWALSyncerStop: stop waits for the goroutine and can be called
// again (Close twice); a store without a file has no syncer, and asking a
// nil one is a no-op.
func TestWALSyncerStop(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the WAL is synced in the background on Linux only")
	}
	w := newWALSyncer(filepath.Join(t.TempDir(), "none.db"))
	w.committed(walSyncBytes) // no WAL file: nothing synced, no error
	w.stop()
	w.stop()
	if got := w.syncs.Load(); got != 0 {
		t.Errorf("syncs of a missing WAL = %d, want 0", got)
	}
	var none *walSyncer
	none.committed(walSyncBytes)
	none.stop()

	s := openStore(t, ":memory:")
	if s.wal != nil {
		t.Errorf("Open(:memory:) has a WAL syncer for %q", s.wal.path)
	}
}
