package scorerpb

import (
	"fmt"
	"strings"
	"testing"
)

// TestReuseBounded checks that a reuse cache holds at most two generations
// of reuseLimit bytes of keys, and that a key asked for in every round
// stays while others come and go.
func TestReuseBounded(t *testing.T) {
	t.Parallel()
	var r reuse[int]
	hot := []byte("the task every batch has")
	r.put(hot, -1)
	pad := strings.Repeat("x", 1000)
	for i := range 5 * reuseLimit / 1000 {
		r.put(fmt.Appendf(nil, "%d%s", i, pad), i)
		if v, ok := r.get(hot); !ok || v != -1 {
			t.Fatalf("after %d puts: get(hot) = %d, %v, want -1, true", i+1, v, ok)
		}
		held := 0
		for k := range r.cur {
			held += len(k)
		}
		for k := range r.old {
			held += len(k)
		}
		if held > 2*reuseLimit {
			t.Fatalf("after %d puts: %d bytes of keys held, want at most %d", i+1, held, 2*reuseLimit)
		}
	}
	if got := r.put(hot, -2); got != -1 {
		t.Errorf("put(hot, -2) = %d, want the value kept, -1", got)
	}
	if _, ok := r.get([]byte(strings.Repeat("y", reuseLimit+1))); ok {
		t.Errorf("get(a key never put) = ok")
	}
}

// TestDecoderDropsFullShared checks that a batch's shared strings are not
// kept for the next batch once they are full: the next batch starts
// afresh. (That a set with room is kept is a sync.Pool's promise, which
// it need not keep; BenchmarkWire64Stripped's allocations show it.)
func TestDecoderDropsFullShared(t *testing.T) {
	t.Parallel()
	for _, full := range []string{"names", "boxes"} {
		var dc Decoder
		sh := newShared()
		for i := range maxNames {
			s := fmt.Sprint(i)
			if full == "names" {
				sh.names.add(s)
			} else {
				sh.boxes[s] = s
			}
		}
		dc.putShared(sh)
		if got, _ := dc.shared.Get().(*shared); got == sh {
			t.Errorf("%s full: putShared kept the set for the next batch", full)
		}
	}
}
