//go:build !linux

package pluginhost

import "syscall"

// dieWithParent is Linux-only; elsewhere go-plugin's own cleanup applies.
func dieWithParent() *syscall.SysProcAttr { return nil }
