//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package pack

import "os"

// readOffHeap is not done on this platform: Validate reads the pack onto
// the heap, as Load does.
func readOffHeap(f *os.File, size int) (src []byte, free func(), ok bool) { return nil, nil, false }
