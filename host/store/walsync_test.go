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
	w := newWALSyncer(context.Background(), filepath.Join(t.TempDir(), "none.db"), nil)
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

// TestWALCheckpointedBesideTheRecorder: a file store's sync past
// walSyncBytes is followed by a checkpoint, so the rows reach the database
// file while the store is still open (without the checkpoint the file does
// not grow before Close: WAL mode writes only the WAL): after every sync
// while the run has committed up to walYoungBytes, then after every second,
// however many rows the run has committed (a long run's checkpoints are
// done beside the recorder, not in its commits: before the twelfth round
// they stopped after the first 32 MiB). It fails without the checkpoint,
// with it at every commit or every sync, with it for the first sync only,
// or with it stopped past walYoungBytes.
func TestWALCheckpointedBesideTheRecorder(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the WAL is synced in the background on Linux only")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	s := openStore(t, path)
	w := s.wal
	if w == nil || w.conn == nil {
		t.Fatalf("Open(%q): no WAL syncer with a connection of its own", path)
	}
	run := beginRun(t, s)
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	const chunk = 50
	next := 0
	record := func() int64 { // chunks past walSyncBytes once; the bytes of rows recorded
		turns, blobs := recordChunk(run, next, chunk)
		per := recordBytes(blobs, turns)
		n := int(walSyncBytes/per) + 1
		for range n {
			turns, blobs := recordChunk(run, next, chunk)
			if err := s.RecordTurns(ctx, blobs, turns); err != nil {
				t.Fatalf("RecordTurns(turns from %d) = %v", next, err)
			}
			next += chunk
		}
		return int64(n) * per
	}
	// wait waits for the syncs and checkpoints so far; a checkpoint follows
	// its sync on the same goroutine, so one that is not due is caught by
	// the counts at a later step and at the end.
	wait := func(syncs, ckpts int32) {
		for deadline := time.Now().Add(10 * time.Second); (w.syncs.Load() < syncs || w.ckpts.Load() < ckpts) && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if got, want := [2]int32{w.syncs.Load(), w.ckpts.Load()}, [2]int32{syncs, ckpts}; got != want {
			t.Fatalf("[syncs checkpoints] = %v, want %v", got, want)
		}
	}
	grows := func(before, rows int64) {
		t.Helper()
		if grew := size() - before; grew < rows/2 {
			t.Errorf("after %d bytes of rows more and a checkpoint: the database file grew by %d bytes, want at least %d", rows, grew, rows/2)
		}
	}

	before := size()
	rows := record() // young: a checkpoint
	wait(1, 1)
	grows(before, rows)
	w.committed(walYoungBytes) // as if a long run had committed this much more: past young, the first of two
	wait(2, 1)
	for i := int32(3); i <= 6; i++ {
		before := size()
		rows := record()
		due := i%2 == 1 // the second, fourth… sync past young
		ckpts := (i + 1) / 2
		wait(i, ckpts)
		if due {
			grows(before, rows)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if got, want := [2]int32{w.syncs.Load(), w.ckpts.Load()}, [2]int32{6, 3}; got != want {
		t.Errorf("after Close: [syncs checkpoints] = %v, want %v", got, want)
	}
	for _, f := range []string{path + "-wal", path + "-shm"} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("after Close: stat %s = %v, want not exist", f, err)
		}
	}
	s = openStore(t, path)
	if got := len(storedTurns(t, s, run)); got != next {
		t.Errorf("after reopening: %d turns stored, want %d", got, next)
	}
}

// TestWALSyncerKeepsPool: the connection the syncer holds for its
// checkpoints is not one of the sqliteMaxConns the store's other work can
// hold at once.
func TestWALSyncerKeepsPool(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the WAL is synced in the background on Linux only")
	}
	s := openStore(t, filepath.Join(t.TempDir(), "assay.db"))
	if s.wal == nil || s.wal.conn == nil {
		t.Fatal("no WAL syncer with a connection of its own")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range sqliteMaxConns {
		c, err := s.DB().Conn(ctx)
		if err != nil {
			t.Fatalf("connection %d of %d: %v", i+1, sqliteMaxConns, err)
		}
		defer c.Close()
	}
}

// TestWALSyncerConnCache: the syncer's connection keeps a small page cache
// (its checkpoints do not read through it), whatever the pool's is.
func TestWALSyncerConnCache(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the WAL is synced in the background on Linux only")
	}
	s := openStore(t, filepath.Join(t.TempDir(), "assay.db"))
	if s.wal == nil || s.wal.conn == nil {
		t.Fatal("no WAL syncer with a connection of its own")
	}
	var got int
	if err := s.wal.conn.QueryRowContext(context.Background(), `PRAGMA cache_size`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := -walCheckpointCacheKiB; got != want {
		t.Errorf("the syncer's connection: cache_size = %d, want %d", got, want)
	}
}
