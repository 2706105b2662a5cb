package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// walSyncer fsyncs a SQLite database's WAL file in the background while a
// store records (docs/storage.md, "Durability"). With synchronous = NORMAL
// a commit leaves its frames in the operating system's cache, and the
// next checkpoint — for a short run the one SQLite runs when the store
// closes — fsyncs the whole WAL before copying it into the database file:
// after a verify of 10,000 turns about 30 MB, all of it written to disk in
// that one call at the end of the run. Syncing the WAL every few megabytes
// of commits writes those pages while the run is still scoring, so the
// checkpoint's fsync finds little left to write. It only adds fsyncs: what
// a commit and a checkpoint guarantee is unchanged.
//
// While the run is young it also checkpoints after each sync (PASSIVE, on
// a connection it holds: it copies the frames committed so far into the
// database file and fsyncs it, and never takes the write lock, so the
// recorder goes on). The checkpoint when the store closes then copies and
// fsyncs only what was committed since, where it used to copy a
// 10,000-turn run's whole WAL (about 20 MB of pages) after the last turn.
// A checkpoint is SQLite's own operation, as crash-safe as the one it
// runs itself; an interrupted one is redone from the WAL.
// Only the first walCheckpointBytes of rows are checkpointed so: a page a
// run keeps rewriting (the blob key index's leaves) is copied once a
// checkpoint, so checkpoints every few megabytes through a long run would
// copy it many times a WAL cycle, where SQLite's own (wal_autocheckpoint)
// copy it once (docs/performance.md, "Verifying many small turns").
//
// A failed fsync here is not reported: the WAL's pages are still SQLite's
// to sync, and Linux reports a write-back error to every open file
// description of the file (errseq, since 4.13), so SQLite's own fsync at
// the checkpoint still sees it.
type walSyncer struct {
	path    string        // the WAL file: the database file's name + "-wal"
	pending atomic.Int64  // bytes committed since the last sync was asked for
	kick    chan struct{} // a sync is asked for; holds one
	quit    chan struct{} // closed by stop
	done    chan struct{} // closed when the goroutine has returned

	conn  *sql.Conn    // the connection the checkpoints use; nil: none
	total atomic.Int64 // bytes committed in all

	stopOnce sync.Once
	syncs    atomic.Int32 // fsyncs done (tests)
	ckpts    atomic.Int32 // checkpoints done (tests)
}

// walSyncBytes is how many bytes of rows are committed between two syncs
// (the WAL grows by more: every page a commit changes is written whole).
// Each fsync also commits the file system's journal, so one a chunk would
// cost more CPU than it saves; the checkpoint is left about this much.
const walSyncBytes = 4 << 20

// walCheckpointBytes bounds the rows a store checkpoints in the background
// for: a sync asked for once more than this many bytes of rows are
// committed checkpoints nothing. A 10,000-turn verify commits 16–20 MiB of
// rows (four syncs); by 32 MiB SQLite's own checkpoint (wal_autocheckpoint)
// has folded the WAL back once, and the close finds at most a WAL cycle to
// copy, as before.
const walCheckpointBytes = 32 << 20

// walCheckpointCacheKiB is the page cache of the syncer's connection,
// which reads few pages itself.
const walCheckpointCacheKiB = 64

// newWALSyncer starts syncing the WAL of the database at dbPath and, when
// db is not nil, checkpointing it while the run is young through a
// connection of db's it holds until stop (checkpoints on the pool's
// connections raised a verify's peak by about 3.5 MB, most likely by taking
// the one the recorder had used so that it filled a second page cache); nil (no
// syncing) where the reasoning above is not known to hold: off Linux a
// read-only handle may not sync (Windows), a sync may cost more than the
// checkpoint's own (macOS's full flush), and a write-back error may not
// reach SQLite's own descriptor.
func newWALSyncer(ctx context.Context, dbPath string, db *sql.DB) *walSyncer {
	if runtime.GOOS != "linux" {
		return nil
	}
	w := &walSyncer{path: dbPath + "-wal", kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	if db != nil {
		if conn, err := db.Conn(ctx); err == nil {
			w.conn = conn // without it the WAL is only synced
			// A checkpoint copies frames through a buffer of its own, not
			// the page cache: the pages this connection read before (the
			// migration's, say) need not stay resident while it is held.
			_, _ = conn.ExecContext(ctx, `PRAGMA shrink_memory`)
			_, _ = conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = -%d`, walCheckpointCacheKiB))
		}
	}
	go w.loop()
	return w
}

// committed counts n bytes of rows committed and asks for a sync once
// walSyncBytes are; asks that come while a sync runs are folded into the
// next one. It never blocks.
func (w *walSyncer) committed(n int64) {
	if w == nil {
		return
	}
	w.total.Add(n)
	if w.pending.Add(n) < walSyncBytes {
		return
	}
	w.pending.Store(0)
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *walSyncer) loop() {
	defer close(w.done)
	defer func() {
		if w.conn != nil {
			w.conn.Close() // back to the pool
		}
	}()
	for {
		select {
		case <-w.quit:
			return
		case <-w.kick:
		}
		// The file is opened for each sync: SQLite removes the WAL when the
		// last connection to the database closes (another process's, say)
		// and starts a new one, which a handle kept open would miss. Closing
		// a descriptor drops every POSIX lock the process holds on that
		// file, but SQLite's unix VFS locks only the database and -shm files
		// (it opens every other file, the WAL included, without locking), so
		// closing this one releases none of SQLite's. The database file
		// itself must never be opened and closed here.
		f, err := os.Open(w.path)
		if err != nil {
			continue // no WAL (yet): nothing to sync
		}
		if f.Sync() == nil {
			w.syncs.Add(1)
		}
		f.Close()
		if w.conn != nil && w.total.Load() <= walCheckpointBytes {
			w.checkpoint()
		}
	}
}

// checkpoint copies the WAL's committed frames into the database file, as
// far as no reader still needs them (PASSIVE). An error leaves the frames
// in the WAL for the next checkpoint (SQLite's own, or the close's), so it
// is not reported.
func (w *walSyncer) checkpoint() {
	var busy, frames, copied int
	if w.conn.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied) == nil {
		w.ckpts.Add(1)
	}
}

// stop ends the goroutine, after the sync in progress if any, and waits
// for it; a sync asked for and not begun is dropped (the checkpoint at
// close syncs the WAL itself).
func (w *walSyncer) stop() {
	if w == nil {
		return
	}
	w.stopOnce.Do(func() { close(w.quit) })
	<-w.done
}

// sqliteMainFile is the path of db's main database file; empty for an
// in-memory or temporary database, or when it cannot be read.
func sqliteMainFile(ctx context.Context, db *sql.DB) string {
	rows, err := db.QueryContext(ctx, `PRAGMA database_list`)
	if err != nil {
		return ""
	}
	defer rows.Close()
	for rows.Next() {
		var seq int
		var name, file string
		if rows.Scan(&seq, &name, &file) == nil && name == "main" {
			return file
		}
	}
	return ""
}
