//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package pack

import (
	"io"
	"os"
	"syscall"
)

// readOffHeap reads the size bytes of f into memory outside the Go heap
// (an anonymous private mapping, made read-only once filled), for Validate
// (docs/performance.md, "Packs"): the source is the largest thing live while
// a pack is checked, and on the heap the collector's goal counts it twice
// (once live, once as the room to grow by). ok is false, with nothing
// allocated and f's offset unknown, when it cannot be done or f did not hold
// exactly size bytes; free unmaps the memory, which nothing may use after.
func readOffHeap(f *os.File, size int) (src []byte, free func(), ok bool) {
	if size <= 0 {
		return nil, nil, false
	}
	buf, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, false
	}
	free = func() { syscall.Munmap(buf) }
	var more [1]byte
	if _, err := io.ReadFull(f, buf); err != nil {
		free()
		return nil, nil, false
	}
	if n, _ := f.Read(more[:]); n > 0 { // the file grew since it was sized
		free()
		return nil, nil, false
	}
	if syscall.Mprotect(buf, syscall.PROT_READ) != nil {
		free()
		return nil, nil, false
	}
	return buf, free, true
}
