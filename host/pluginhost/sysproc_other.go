//go:build !linux

package pluginhost

import (
	"os"
	"syscall"
)

// sysProcAttr: no process group or parent-death signal off Linux.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// execPath off Linux is the path itself: the file is hashed, then the path
// executed (docs/plugins.md, "What runs").
func execPath(_ *os.File, path string) (string, []*os.File) { return path, nil }

// setLimits sets no limits off Linux.
func setLimits(int, Limits) error { return nil }

// killGroup off Linux kills the process only.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
