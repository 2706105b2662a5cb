package plugin

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
)

// residentKB is the process's resident memory in kB (VmRSS), or -1 where
// /proc does not say.
func residentKB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := bytes.Fields(rest)
			if len(f) > 0 {
				n, err := strconv.Atoi(string(f[0]))
				if err == nil {
					return n
				}
			}
		}
	}
	return -1
}

func heapGoal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestHeapFloor checks what Serve sets up when GOGC is not set: after a
// collection the heap goal is at least twice the floor (the collector
// counts it as live), and the floor's pages are not resident. Each case
// runs in a fresh process of the test binary, whose heap has no floor
// yet. In "reused" the process first allocates, writes and frees a
// block larger than the floor, so the floor lands where freed objects
// were and the runtime clears it, making it resident until
// setHeapFloor releases it.
func TestHeapFloor(t *testing.T) {
	mode := os.Getenv("ASSAY_TEST_HEAP_FLOOR")
	if mode == "" {
		for _, mode := range []string{"fresh", "reused"} {
			t.Run(mode, func(t *testing.T) {
				cmd := exec.Command(os.Args[0], "-test.run", "^TestHeapFloor$", "-test.count", "1", "-test.v")
				cmd.Env = append(os.Environ(), "ASSAY_TEST_HEAP_FLOOR="+mode, "GOGC=100")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
			})
		}
		return
	}
	if mode == "reused" {
		dirty := make([]byte, 2*heapFloor)
		for i := 0; i < len(dirty); i += 4096 {
			dirty[i] = 1
		}
		dirty = nil
		runtime.GC()
	}
	runtime.GC()
	if g := heapGoal(); g >= 2*heapFloor {
		t.Fatalf("before the floor the heap goal is already %d bytes; the test cannot tell", g)
	}
	before := residentKB()
	if err := setHeapFloor(); err != nil {
		t.Fatalf("setHeapFloor: %v", err)
	}
	runtime.GC()
	if g := heapGoal(); g < 2*heapFloor {
		t.Errorf("heap goal with the floor = %d bytes, want at least %d", g, 2*heapFloor)
	}
	if n, ok := residentPages(floor); ok && n*os.Getpagesize() > heapFloor/16 {
		t.Errorf("%d of the floor's pages are resident; it should cost address space only", n)
	}
	if before >= 0 {
		if grew := residentKB() - before; grew > heapFloor/1024/4 {
			t.Errorf("the floor made the process %d kB larger; it should cost address space only", grew)
		}
	}
	p := &floor[0]
	setHeapFloor() // a second call keeps the same floor
	if &floor[0] != p {
		t.Error("setHeapFloor allocated a second floor")
	}
}
