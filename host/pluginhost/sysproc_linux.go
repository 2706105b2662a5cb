package pluginhost

import "syscall"

// dieWithParent makes the kernel kill a plugin when the host goes away.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
