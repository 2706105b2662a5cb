package scorerpb

import (
	"fmt"
	"testing"
	"unsafe"
)

// TestNameTable checks that equal bytes give one shared string, through
// the table of recent strings and through the map behind it when two
// values take the same slot, that a full table shares no more, and that
// bytes that are not UTF-8 are refused.
func TestNameTable(t *testing.T) {
	t.Parallel()
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	tb := newNameTable()
	// "search" and "seerch" take the same slot (same length, first and
	// last byte), so each lookup of one pushes the other out of it.
	a, b := []byte("search"), []byte("seerch")
	if slot(a) != slot(b) {
		t.Fatal("the test's two values take different slots")
	}
	first := map[string]string{}
	for round := 0; round < 3; round++ {
		for _, v := range [][]byte{a, b, a, []byte("create_task"), b} {
			s, err := tb.share(v)
			if err != nil || s != string(v) {
				t.Fatalf("share(%q) = %q, %v", v, s, err)
			}
			if f, ok := first[s]; ok && !same(f, s) {
				t.Errorf("round %d: share(%q) is a new string, want the first one shared", round, v)
			} else if !ok {
				first[s] = s
			}
		}
	}
	if s, err := tb.share(nil); err != nil || s != "" {
		t.Errorf("share(empty) = %q, %v", s, err)
	}
	if _, err := tb.share([]byte{'a', 0xff}); err == nil {
		t.Error("share(invalid UTF-8) error = nil")
	}
	for i := 0; !tb.full(); i++ {
		tb.add(fmt.Sprint("n", i))
	}
	s1, _ := tb.share([]byte("after full"))
	s2, _ := tb.share([]byte("after full"))
	if same(s1, s2) || len(tb.m) != maxNames {
		t.Errorf("a full table shared a new string (%d strings)", len(tb.m))
	}
}
