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
// After a sync it also checkpoints (PASSIVE, on a connection it holds: it
// copies the frames committed so far into the database file and fsyncs it,
// and never takes the write lock, so the recorder goes on): after each one
// while the run is young, then after every second (checkpointDue). So the
// checkpoint when the store closes copies and fsyncs only what was
// committed since the last of them, where it used to copy a 10,000-turn
// run's whole WAL (about 20 MB of pages) after the last turn; and on a long run
// the copies and fsyncs are done here, beside the recorder, instead of in
// the commit that takes the WAL past wal_autocheckpoint pages, which held
// the recorder (and the run behind it) up for two fsyncs each WAL cycle:
// 16% of a 300,000-turn run's wall time on this project's machine. A
// checkpoint only copies; the WAL starts again from its beginning at the
// next write transaction once a checkpoint has copied all of it. One that
// runs while the recorder keeps committing rarely gets there (it does when
// it ends between two commits), so SQLite's own, in the commit that passes
// sqliteAutocheckpointPages (32,768 on Linux), still makes sure of it once
// a cycle, finding only the frames committed since the last of ours to
// copy.
// When the two meet, the later one gets SQLITE_BUSY at once and copies
// nothing (the commit's is tried again at the next commit), so the WAL can
// grow a little past that size, or further behind a reader that holds an
// old snapshot, as before. A checkpoint is SQLite's own operation, as
// crash-safe as the one it runs itself; an interrupted one is redone from
// the WAL (docs/performance.md, "Twelfth round").
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

	conn   *sql.Conn    // the connection the checkpoints use; nil: none
	total  atomic.Int64 // bytes of rows committed in all
	mature int          // syncs asked for past walYoungBytes (the loop's)

	stopOnce sync.Once
	syncs    atomic.Int32 // fsyncs done (tests)
	ckpts    atomic.Int32 // checkpoints done, not busy (tests)
}

// walSyncBytes is how many bytes of rows are committed between two syncs
// (the WAL grows by more: every page a commit changes is written whole; a
// chunk of a long run writes about two pages a turn). The smaller it is,
// the less the commit's own checkpoint finds left to copy and fsync once a
// WAL cycle, and the more often a page rewritten through the run (the turns
// table's last page, a hot index page) is copied; each fsync also commits
// the file system's journal. 2 MiB took a 1M run no faster than 4 and used
// more CPU and memory (docs/performance.md).
const walSyncBytes = 4 << 20

// walYoungBytes and walMatureEvery: each sync is followed by a checkpoint
// until the run has committed walYoungBytes of rows (a 10,000-turn verify
// of one-turn answers commits 16–20 MiB, so its close finds at most 4 MiB
// of rows' frames to copy), and every walMatureEvery-th after that (8 MiB):
// a page rewritten all through a long run (the turns table's last page, a
// hot index page, the blob key index's leaves while it is small) is copied
// at every checkpoint, and a checkpoint after every sync in
// BenchmarkVerify10k (whose traces commit far more than 32 MiB) took 5%
// more CPU and 7% fewer turns a second, where one in two took neither, and
// a 1M run as little wall time
// (docs/performance.md, "Twelfth round").
const (
	walYoungBytes  = 32 << 20
	walMatureEvery = 2
)

// walCheckpointCacheKiB is the page cache of the syncer's connection,
// which reads few pages itself.
const walCheckpointCacheKiB = 64

// newWALSyncer starts syncing the WAL of the database at dbPath and, when
// db is not nil, checkpointing it after syncs (checkpointDue) through a
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
		// The checkpoint below fsyncs the WAL itself before it copies; this
		// sync writes it back first, outside the checkpointer lock, so the
		// checkpoint holds that lock (which the commit's own would find
		// busy) for less.
		if f.Sync() == nil {
			w.syncs.Add(1)
		}
		f.Close()
		if w.conn != nil && w.checkpointDue() {
			w.checkpoint()
		}
	}
}

// checkpointDue reports whether the sync just done is followed by a
// checkpoint: every one while the run has committed up to walYoungBytes of
// rows, then every walMatureEvery-th.
func (w *walSyncer) checkpointDue() bool {
	if w.total.Load() <= walYoungBytes {
		return true
	}
	w.mature++
	return w.mature%walMatureEvery == 0
}

// checkpoint copies the WAL's committed frames into the database file, as
// far as no reader still needs them (PASSIVE). An error, or another
// checkpoint running (busy), leaves the frames in the WAL for the next
// checkpoint (SQLite's own, or the close's), so it is not reported.
func (w *walSyncer) checkpoint() {
	var busy, frames, copied int
	if w.conn.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied) == nil && busy == 0 {
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
