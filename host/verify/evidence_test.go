package verify

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/store/storetest"
)

// evidenceSizes are the sizes TestEvidenceBlobs keeps: empty, tiny, the
// benchmark's three-event trace, each side of smallBlob, and larger ones.
var evidenceSizes = []int{0, 1, 175, smallBlob - 1, smallBlob, smallBlob + 1, 4096, 100_000}

// evidenceBytes is n bytes of trace-like text, different for each seed.
func evidenceBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	var b bytes.Buffer
	for b.Len() < n {
		fmt.Fprintf(&b, `{"type":"final_answer","payload":{"message":"answer %d of %d"}}`+"\n", r.IntN(1000), r.IntN(1000))
	}
	return b.Bytes()[:n]
}

// TestEvidenceBlobs: evidence of at most smallBlob bytes is kept as it is
// (encoding identity), longer evidence gzipped; either way the blob's
// sha256 and size are those of every byte read, its bytes read back as
// they were, whatever pieces the reader hands them over in, and a writer
// reused after a small blob compresses as a new one would.
func TestEvidenceBlobs(t *testing.T) {
	t.Parallel()
	e := &Engine{gzips: newGzipPool(1)}
	readers := map[string]func([]byte) io.Reader{
		"whole":    func(b []byte) io.Reader { return bytes.NewReader(b) },
		"one byte": func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
		"halves":   func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
	}
	for name, reader := range readers {
		for _, n := range evidenceSizes {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				raw := evidenceBytes(n, 1)
				tee := e.newEvidenceTee(reader(raw), true)
				if _, err := io.ReadAll(io.LimitReader(tee, int64(n/2))); err != nil { // the parser reads part ...
					t.Fatal(err)
				}
				sha, blob, err := tee.finish(store.BlobTrace) // ... finish reads the rest
				if err != nil {
					t.Fatal(err)
				}
				want := sha256Hex(raw)
				if sha != want || blob.SHA256 != sha {
					t.Errorf("sha256 = %s, blob %s, want %s", sha, blob.SHA256, want)
				}
				if blob.Size != int64(n) || blob.Kind != store.BlobTrace {
					t.Errorf("blob size %d kind %q, want %d %q", blob.Size, blob.Kind, n, store.BlobTrace)
				}
				wantEnc := store.EncodingGzip
				if n <= smallBlob {
					wantEnc = store.EncodingIdentity
				}
				if blob.Encoding != wantEnc {
					t.Errorf("encoding %q, want %q", blob.Encoding, wantEnc)
				}
				if blob.Data == nil {
					t.Fatal("blob data is nil (the column is NOT NULL)")
				}
				if got := decodeBlob(t, blob); !bytes.Equal(got, raw) {
					t.Errorf("blob reads back as %d bytes %q..., want the %d bytes read", len(got), got[:min(len(got), 40)], n)
				}
			})
		}
	}
	t.Run("hash only", func(t *testing.T) {
		raw := evidenceBytes(4096, 2)
		sha, blob, err := e.newEvidenceTee(bytes.NewReader(raw), false).finish(store.BlobTrace)
		want := sha256Hex(raw)
		if err != nil || blob != nil || sha != want {
			t.Errorf("finish without keep = %s, %v, %v; want %s, no blob", sha, blob, err, want)
		}
	})
}

// eofCounter counts the reads asked of it after it said io.EOF.
type eofCounter struct {
	r          io.Reader
	eof, after int
}

func (c *eofCounter) Read(p []byte) (int, error) {
	if c.eof > 0 {
		c.after++
	}
	n, err := c.r.Read(p)
	if err == io.EOF {
		c.eof++
	}
	return n, err
}

// TestEvidenceReadToEOF: when the parser read the trace to its end, finish
// keeps and hashes every byte and asks the file for nothing more; when it
// stopped short, finish reads the rest (TestEvidenceBlobs).
func TestEvidenceReadToEOF(t *testing.T) {
	t.Parallel()
	e := &Engine{gzips: newGzipPool(1)}
	for _, n := range evidenceSizes {
		raw := evidenceBytes(n, 3)
		src := &eofCounter{r: iotest.HalfReader(bytes.NewReader(raw))}
		tee := e.newEvidenceTee(src, true)
		if _, err := io.ReadAll(tee); err != nil {
			t.Fatal(err)
		}
		sha, blob, err := tee.finish(store.BlobTrace)
		if err != nil || sha != sha256Hex(raw) || blob.Size != int64(n) || !bytes.Equal(decodeBlob(t, blob), raw) {
			t.Errorf("finish after EOF of %d bytes = %s, %v, want %s and the bytes read", n, sha, err, sha256Hex(raw))
		}
		if src.after != 0 {
			t.Errorf("finish after EOF of %d bytes read %d more times, want none", n, src.after)
		}
	}
}

// decodeBlob is the bytes a blob stands for.
func decodeBlob(t *testing.T, b *store.Blob) []byte {
	t.Helper()
	if b.Encoding == store.EncodingIdentity {
		return b.Data
	}
	zr, err := gzip.NewReader(bytes.NewReader(b.Data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEvidenceBlobsStored: blobs of every size kept by the tee, stored,
// read back through every reader of stored evidence (ReadBlob, OpenBlob,
// ReadBlobs) as the bytes they were, on both backends.
func TestEvidenceBlobsStored(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, b.DSN(t))
			e := &Engine{gzips: newGzipPool(1)}
			raws := map[string][]byte{}
			var blobs []store.Blob
			var shas []string
			for i, n := range evidenceSizes {
				raw := evidenceBytes(n, uint64(10+i))
				_, blob, err := e.newEvidenceTee(bytes.NewReader(raw), true).finish(store.BlobTrace)
				if err != nil {
					t.Fatal(err)
				}
				raws[blob.SHA256] = raw
				blobs = append(blobs, *blob)
				shas = append(shas, blob.SHA256)
			}
			if err := st.PutBlobs(ctx, blobs); err != nil {
				t.Fatal(err)
			}
			many, err := st.ReadBlobs(ctx, shas)
			if err != nil {
				t.Fatal(err)
			}
			for sha, raw := range raws {
				got, err := st.ReadBlob(ctx, sha)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, raw) {
					t.Errorf("ReadBlob(%d bytes) = %d bytes, not the bytes stored", len(raw), len(got))
				}
				if !bytes.Equal(many[sha], raw) {
					t.Errorf("ReadBlobs(%d bytes) = %d bytes, not the bytes stored", len(raw), len(many[sha]))
				}
			}
			stats, err := st.EvidenceStats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var size int64
			for _, n := range evidenceSizes {
				size += int64(n)
			}
			if stats.Blobs != int64(len(evidenceSizes)) || stats.Size != size {
				t.Errorf("EvidenceStats = %+v, want %d blobs of %d bytes", stats, len(evidenceSizes), size)
			}
		})
	}
}
