package cli

import (
	goruntime "runtime"
	"runtime/debug"
	"testing"
)

// TestVerifyMemoryLimit: the floor while little is live, one and a half
// times the live heap above it, so the collector never runs without end.
func TestVerifyMemoryLimit(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		live uint64
		want int64
	}{
		"nothing live":         {0, 64 << 20},
		"small live heap":      {40 << 20, 64 << 20},
		"at the floor":         {(64 << 20) * 2 / 3, 64 << 20},
		"large live heap":      {100 << 20, 150 << 20},
		"very large live heap": {1 << 30, 3 << 29},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := verifyMemoryLimit(tc.live); got != tc.want {
				t.Errorf("verifyMemoryLimit(%d) = %d, want %d", tc.live, got, tc.want)
			}
		})
	}
}

// TestSetVerifyMemoryLimitRestores: the limit follows the live heap after
// collections while verify runs, and the previous one is back after it.
// Not parallel: the memory limit is the process's.
func TestSetVerifyMemoryLimitRestores(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	restore := setVerifyMemoryLimit()
	goruntime.GC()
	goruntime.GC()
	if got := debug.SetMemoryLimit(-1); got < verifyMemoryFloor || got == before {
		restore()
		t.Fatalf("memory limit while verifying = %d, want verifyMemoryLimit of the live heap (at least %d)", got, verifyMemoryFloor)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("memory limit after verify = %d, want the previous %d", got, before)
	}
	goruntime.GC()
	goruntime.GC()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("memory limit after verify and two collections = %d, want the previous %d", got, before)
	}
}
