package verify

import (
	"bytes"
	"compress/gzip"
	"io"
	"runtime"
	"testing"
)

// TestGzipPool: the evidence gzip writers outlive collections (a sync.Pool
// dropped them, and every candidate allocated them again), at most as many
// as the pool holds are kept, a reused writer compresses like a new one,
// and the zero pool keeps none without blocking.
func TestGzipPool(t *testing.T) {
	t.Parallel()
	roundTrip := func(t *testing.T, zw *gzip.Writer, buf *bytes.Buffer, text string) {
		t.Helper()
		if _, err := io.WriteString(zw, text); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(buf)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || string(got) != text {
			t.Fatalf("decompressed %q, %v; want %q", got, err, text)
		}
	}
	p := newGzipPool(2)
	var b1, b2, b3 bytes.Buffer
	w1, w2, w3 := p.get(&b1), p.get(&b2), p.get(&b3)
	roundTrip(t, w1, &b1, "first trace")
	p.put(w1)
	p.put(w2)
	p.put(w3) // the pool is full: dropped
	if n := len(p.free); n != 2 {
		t.Errorf("the pool holds %d writers after three puts, want 2", n)
	}
	runtime.GC()
	runtime.GC()
	var b4 bytes.Buffer
	if got := p.get(&b4); got != w1 {
		t.Errorf("get after two collections = a new writer, want the one put first")
	} else {
		roundTrip(t, got, &b4, "second trace, compressed by a reused writer")
	}
	var zero gzipPool
	var b5 bytes.Buffer
	w := zero.get(&b5)
	roundTrip(t, w, &b5, "the zero pool")
	zero.put(w) // must not block
}
