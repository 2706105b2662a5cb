package verify

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"sync"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/pkg/companyos"
)

// evidenceTee is a trace on its way to the parser: what is read through it
// is hashed and, when keep is set, kept: its first smallBlob bytes as they
// are and, once it is longer, gzipped into a buffer, so a trace is hashed
// and compressed as it is parsed and never held whole (docs/evidence.md).
type evidenceTee struct {
	src  io.Reader
	h    hash.Hash
	keep bool
	raw  []byte       // what was read, while it is at most smallBlob bytes
	zw   *gzip.Writer // compressing into buf, once more than smallBlob bytes were read
	buf  bytes.Buffer
	n    int64
	eof  bool // src said io.EOF: finish has nothing left to read
	pool *gzipPool
}

// smallBlob is the size up to which evidence is stored as it is
// (encoding identity) rather than gzipped: on a few hundred bytes gzip
// saves a few dozen at most (a three-event trace of 175 bytes becomes
// 151, one of 42 becomes 70) for the compressor's work and its 1 MB of
// tables per worker (docs/performance.md, "Verifying many small turns").
const smallBlob = 512

func (e *Engine) newEvidenceTee(src io.Reader, keep bool) *evidenceTee {
	return &evidenceTee{src: src, h: sha256.New(), keep: keep, pool: &e.gzips}
}

// gzipPool keeps the gzip writers evidence is compressed with, at most as
// many as the engine's workers use at once. A writer is about 1 MB (the
// compressor's tables), and a sync.Pool, emptied by every collection or
// two, dropped them whenever a candidate's turns paused between passes: the
// next candidate allocated them all again at once, the largest peaks of the
// heap of a run of many candidates (docs/performance.md, "Flat memory").
type gzipPool struct {
	free chan *gzip.Writer // nil: no writer is kept
}

func newGzipPool(n int) gzipPool { return gzipPool{free: make(chan *gzip.Writer, n)} }

// get is a writer compressing into w.
func (p *gzipPool) get(w io.Writer) *gzip.Writer {
	select {
	case zw := <-p.free:
		zw.Reset(w)
		return zw
	default:
		zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed) // a valid level: no error
		return zw
	}
}

// put keeps zw for the next get, unless the pool is full.
func (p *gzipPool) put(zw *gzip.Writer) {
	select {
	case p.free <- zw:
	default:
	}
}

func (t *evidenceTee) Read(p []byte) (int, error) {
	n, err := t.src.Read(p)
	t.eof = t.eof || err == io.EOF
	if n > 0 {
		t.h.Write(p[:n])
		t.n += int64(n)
		if t.keep {
			if werr := t.keepBytes(p[:n]); werr != nil {
				return n, fmt.Errorf("compressing evidence: %w", werr)
			}
		}
	}
	return n, err
}

// keepBytes keeps b, read after what was read before: as it is while the
// whole is at most smallBlob bytes, then through a gzip writer that starts
// with what was kept as it is.
func (t *evidenceTee) keepBytes(b []byte) error {
	if t.zw == nil {
		if t.n <= smallBlob {
			t.raw = append(t.raw, b...)
			return nil
		}
		t.zw = t.pool.get(&t.buf)
		if _, err := t.zw.Write(t.raw); err != nil {
			return err
		}
		t.raw = nil
	}
	_, err := t.zw.Write(b)
	return err
}

// finish reads what the parser left, and returns the sha256 of every byte
// read and, when kept, the blob: the bytes as they are when there are at
// most smallBlob of them, else gzipped.
func (t *evidenceTee) finish(kind string) (string, *store.Blob, error) {
	if !t.eof {
		if _, err := io.Copy(io.Discard, t); err != nil {
			return "", nil, err
		}
	}
	sha := hexString(t.h.Sum(nil))
	if !t.keep {
		return sha, nil, nil
	}
	t.keep = false
	if t.zw == nil {
		data := t.raw
		if data == nil {
			data = []byte{} // the column is NOT NULL
		}
		t.raw = nil
		return sha, &store.Blob{SHA256: sha, Kind: kind, Encoding: store.EncodingIdentity, Size: t.n, Data: data}, nil
	}
	err := t.zw.Close()
	t.pool.put(t.zw)
	t.zw = nil
	if err != nil {
		return "", nil, fmt.Errorf("compressing evidence: %w", err)
	}
	return sha, &store.Blob{SHA256: sha, Kind: kind, Encoding: store.EncodingGzip, Size: t.n, Data: bytes.Clone(t.buf.Bytes())}, nil
}

// compressBlob is the blob of bytes already in memory (a snapshot),
// gzipped when it is longer than smallBlob.
func (e *Engine) compressBlob(kind, sha string, raw []byte) (store.Blob, error) {
	t := e.newEvidenceTee(bytes.NewReader(raw), true)
	_, b, err := t.finish(kind)
	if err != nil {
		return store.Blob{}, err
	}
	b.SHA256 = sha
	return *b, nil
}

// openTrace opens a turn's trace: its file, its turns line's events, or
// the stored evidence it was recorded with; kept says a stored turn keeps
// it itself (store.OpenTrace), so a revision recorded from it keeps it too.
func (e *Engine) openTrace(ctx context.Context, ts *TurnSpec, inline []byte) (r io.ReadCloser, kept bool, err error) {
	switch {
	case ts.traceSHA != "":
		return e.cfg.Store.OpenTrace(ctx, ts.traceTurn, ts.traceSHA)
	case ts.TracePath != "":
		f, err := openInputIn(ts.TracePath, ts.Root, ts.realRoot)
		if err != nil {
			return nil, false, fmt.Errorf("opening trace: %w", err)
		}
		return f, false, nil
	}
	return io.NopCloser(bytes.NewReader(inline)), false, nil
}

// hashTrace is the sha256 of a turn's trace bytes, read as a stream.
func (e *Engine) hashTrace(ctx context.Context, ts *TurnSpec, inline []byte) (string, error) {
	if ts.traceSHA != "" {
		return ts.traceSHA, nil
	}
	r, _, err := e.openTrace(ctx, ts, inline)
	if err != nil {
		return "", err
	}
	defer r.Close()
	t := e.newEvidenceTee(r, false)
	sha, _, err := t.finish(store.BlobTrace)
	if err != nil {
		return "", fmt.Errorf("reading trace: %w", err)
	}
	return sha, nil
}

// metricsRow is the canonical JSON of a turn's metrics row, as stored:
// json.Marshal's bytes (appendMetricsRow). It is nil for a NaN or infinite
// metric: the row is not stored.
func metricsRow(ts *TurnSpec) []byte {
	m := turnMetrics{Candidate: ts.Candidate, Label: ts.Label, Persona: ts.Persona,
		LatencyS: ts.LatencyS, CostUSD: ts.CostUSD, StartedAt: ts.StartedAt, FinishedAt: ts.FinishedAt}
	if b, ok := appendMetricsRow(make([]byte, 0, 160+len(m.Candidate)+len(m.Label)+len(m.Persona)), &m); ok {
		return b
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// blobSnapshots remembers the last snapshots parsed from stored evidence,
// by sha256, so a snapshot many stored turns share is read and parsed once
// per rescore. Bounded like fileCache.
type blobSnapshots struct {
	mu sync.Mutex
	m  map[string]*companyos.Snapshot
}

func (c *blobSnapshots) get(sha string) (*companyos.Snapshot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.m[sha]
	return s, ok
}

func (c *blobSnapshots) put(sha string, s *companyos.Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedFiles {
		c.m = map[string]*companyos.Snapshot{}
	}
	c.m[sha] = s
}

// blobSet is the blobs a pass has recorded lately, by sha256, so that a
// blob many of its turns share (a snapshot, a repeated trace) is sent to
// the store once. A digest in lowercase hex, as every digest assay
// computes is, is kept as its 32 bytes (store.Digest, as the blob table
// keys it) rather than its 64-byte string; any other name as it is.
//
// It remembers the last blobSetGeneration names at least and twice that
// at most: when the current generation is full it becomes the previous
// one and the one before is dropped, and a name found in the previous
// generation is remembered again in the current one. A pass of many
// turns with blobs of their own then holds a few thousand digests rather
// than one a turn (docs/performance.md, "Verifying many small turns",
// fourteenth round). A blob met again after being forgotten is sent again
// and the store keeps the row it has (ON CONFLICT (sha256) DO NOTHING on
// both backends): the same evidence is recorded either way, for the work
// of sending it twice. A chunk's blobs (at most 256 turns' trace, metrics
// and snapshots at the defaults) are all within one generation's reach,
// so no write ever carries one blob twice.
type blobSet struct {
	cur, prev blobGeneration
}

// blobSetGeneration is how many names a generation of a blobSet holds.
const blobSetGeneration = 1024

type blobGeneration struct {
	digests map[[sha256.Size]byte]struct{}
	other   map[string]struct{}
}

func (g *blobGeneration) len() int { return len(g.digests) + len(g.other) }

func (g *blobGeneration) has(d [sha256.Size]byte, sha string, digest bool) bool {
	if digest {
		_, in := g.digests[d]
		return in
	}
	_, in := g.other[sha]
	return in
}

func (g *blobGeneration) add(d [sha256.Size]byte, sha string, digest bool) {
	if digest {
		if g.digests == nil {
			g.digests = map[[sha256.Size]byte]struct{}{}
		}
		g.digests[d] = struct{}{}
		return
	}
	if g.other == nil {
		g.other = map[string]struct{}{}
	}
	g.other[sha] = struct{}{}
}

func (s *blobSet) has(sha string) bool {
	d, ok := store.Digest(sha)
	return s.cur.has(d, sha, ok) || s.prev.has(d, sha, ok)
}

// insert adds sha and reports whether it was not in the set before: one
// decoding of the digest where has and an add would make two.
func (s *blobSet) insert(sha string) bool {
	d, ok := store.Digest(sha)
	if s.cur.has(d, sha, ok) {
		return false
	}
	had := s.prev.has(d, sha, ok)
	if s.cur.len() >= blobSetGeneration {
		s.prev, s.cur = s.cur, blobGeneration{}
	}
	s.cur.add(d, sha, ok)
	return !had
}
