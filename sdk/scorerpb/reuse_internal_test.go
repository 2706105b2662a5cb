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
