package plugin

import (
	"os"
	"syscall"
	"unsafe"
)

// releaseFloor tells the kernel it may drop b's pages (MADV_DONTNEED): b
// is never read or written, and an anonymous page dropped reads back as
// zero, which is what b holds. The runtime cleared b if its range held
// freed objects before, and clearing made every page resident.
func releaseFloor(b []byte) error {
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + page - 1) &^ (page - 1)
	hi := (start + uintptr(len(b))) &^ (page - 1)
	if hi <= lo {
		return nil
	}
	return syscall.Madvise(b[lo-start:hi-start], syscall.MADV_DONTNEED)
}
