package pluginhost

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts a plugin in a process group of its own and makes the
// kernel kill it when the host goes away.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// execPath is how to execute the open file f itself: f becomes the child's
// descriptor 3 and the child executes /proc/self/fd/3, which the kernel
// resolves to the file f holds, whatever is at f's path by then. The
// descriptor stays open across the exec so that a script's interpreter can
// open the same path.
func execPath(f *os.File, _ string) (string, []*os.File) {
	return "/proc/self/fd/3", []*os.File{f}
}

// setLimits sets the plugin's resource limits with prlimit(2) right after
// it started (docs/plugins.md, "Limits").
func setLimits(pid int, l Limits) error {
	set := func(res int, v uint64, name string) error {
		if v == 0 {
			return nil
		}
		if err := unix.Prlimit(pid, res, &unix.Rlimit{Cur: v, Max: v}, nil); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	if err := set(unix.RLIMIT_AS, l.AddressSpace, "RLIMIT_AS"); err != nil {
		return err
	}
	if err := set(unix.RLIMIT_CPU, uint64(l.CPU.Seconds()), "RLIMIT_CPU"); err != nil {
		return err
	}
	return set(unix.RLIMIT_NPROC, l.Processes, "RLIMIT_NPROC")
}

// killGroup kills process group pgid.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
