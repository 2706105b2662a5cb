package plugin

import (
	"os"
	"syscall"
	"unsafe"
)

// residentPages counts the pages of b's range that are in memory
// (mincore), or reports false where the kernel does not say.
func residentPages(b []byte) (int, bool) {
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := start &^ (page - 1)
	hi := (start + uintptr(len(b)) + page - 1) &^ (page - 1)
	vec := make([]byte, (hi-lo)/page)
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		return 0, false
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n, true
}
