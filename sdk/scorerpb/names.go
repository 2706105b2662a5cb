package scorerpb

// nameTable shares the short strings that repeat across a batch or an
// answer (tool names, KPI keys, failure tags, argument keys): one string
// for each distinct value, up to maxNames of them. In front of its map is
// a small table of the strings last found or added, one slot for each
// (length, first byte, last byte), which answers most lookups of a batch
// with one comparison instead of hashing the bytes.
type nameTable struct {
	m      map[string]string
	recent [recentSlots]string
}

// recentSlots is the size of a nameTable's table of recent strings.
const recentSlots = 64

func newNameTable() nameTable { return nameTable{m: map[string]string{}} }

// slot is v's slot in the table of recent strings; v is not empty.
func slot[T string | []byte](v T) int {
	return int((uint(len(v)) ^ uint(v[0])<<1 ^ uint(v[len(v)-1])<<3) % recentSlots)
}

// lookup returns the shared string equal to v, if there is one.
func (t *nameTable) lookup(v []byte) (string, bool) {
	if len(v) == 0 {
		return "", true
	}
	i := slot(v)
	if s := t.recent[i]; s == string(v) {
		return s, true
	}
	s, ok := t.m[string(v)]
	if ok {
		t.recent[i] = s
	}
	return s, ok
}

// add shares s (not empty) from now on, unless the table is full.
func (t *nameTable) add(s string) {
	if len(t.m) < maxNames {
		t.m[s] = s
		t.recent[slot(s)] = s
	}
}

// full reports whether t shares as many strings as it may.
func (t *nameTable) full() bool { return len(t.m) >= maxNames }

// share is str(v) taken from t when it is there, else added to t while it
// holds fewer than maxNames.
func (t *nameTable) share(v []byte) (string, error) {
	if s, ok := t.lookup(v); ok {
		return s, nil
	}
	s, err := str(v)
	if err == nil {
		t.add(s)
	}
	return s, err
}
