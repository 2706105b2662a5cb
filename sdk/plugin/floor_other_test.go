//go:build !linux

package plugin

// residentPages reports false: off Linux the test does not ask the kernel.
func residentPages([]byte) (int, bool) { return 0, false }
