package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// paddedTurns is an upload of size bytes generated as it is read: the
// example turns, then lines of spaces (blank lines, skipped by the reader).
type paddedTurns struct {
	head    []byte
	left    int64
	padding []byte
	at      int // offset in padding
}

func newPaddedTurns(head []byte, size int64) *paddedTurns {
	pad := append(bytes.Repeat([]byte(" "), 64<<10-1), '\n')
	return &paddedTurns{head: head, left: size - int64(len(head)), padding: pad}
}

func (p *paddedTurns) Read(b []byte) (int, error) {
	if len(p.head) > 0 {
		n := copy(b, p.head)
		p.head = p.head[n:]
		return n, nil
	}
	if p.left <= 0 {
		return 0, io.EOF
	}
	n := copy(b[:min(int64(len(b)), p.left)], p.padding[p.at:])
	p.at = (p.at + n) % len(p.padding)
	p.left -= int64(n)
	return n, nil
}

// TestServeUploadMemoryBounded (issue 21 numbers): a large upload is
// streamed to disk and verified from there, never held in memory: the heap
// stays small however large the body. ASSAY_UPLOAD_MIB sets the size
// (default 256).
func TestServeUploadMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the large upload")
	}
	size := int64(256)
	if s := os.Getenv("ASSAY_UPLOAD_MIB"); s != "" {
		if n, err := parseInt(s); err == nil {
			size = n
		}
	}
	f := newSQLiteFixture(t, func(c *Config) { c.BodyLimit = 4 << 30 })
	f.putExamplePack()
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
		}
	}()
	req, _ := http.NewRequest("POST", f.http.URL+"/v1/runs?pack=example", newPaddedTurns(exampleTurns(t), size<<20))
	req.Header.Set("Authorization", "Bearer "+f.token)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST %d MiB = %d", size, resp.StatusCode)
	}
	v := f.wait(1)
	close(stop)
	if v.Status != "completed" || v.Counts.Turns != 9 {
		t.Fatalf("run = %+v, want completed with the 9 example turns", v)
	}
	grew := int64(peak.Load()) - int64(base.HeapInuse)
	t.Logf("uploaded and verified %d MiB in %s; heap in use grew by at most %.1f MiB; process peak RSS %s",
		size, time.Since(start).Round(time.Millisecond), float64(grew)/(1<<20), peakRSS())
	if grew > 48<<20 {
		t.Errorf("heap grew by %.1f MiB for a %d MiB upload, want it bounded (< 48 MiB)", float64(grew)/(1<<20), size)
	}
}

// peakRSS is the process's VmHWM from /proc, or "unknown".
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	return "unknown"
}

func parseInt(s string) (int64, error) {
	var n int64
	_, err := fmt.Sscan(s, &n)
	return n, err
}
