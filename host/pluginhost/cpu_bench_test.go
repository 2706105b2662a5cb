package pluginhost_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) of this process and of the
// plugin processes pids (Host.PluginPIDs), read from getrusage and
// /proc/PID/stat. It is the load-independent side of a benchmark on a
// shared machine: wall time moves with other work, CPU time much less.
// Only the plugins' own stat files are read, so that the reading costs
// next to nothing inside the windows it measures (reading every
// /proc/*/stat to find the children cost up to 29% of this process's CPU
// on a busy machine). Off Linux (no /proc) the plugins count as zero.
func cpuTime(pids []int) (self, plugins time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... utime(14) stime(15), comm may hold spaces
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		plugins += time.Duration(ut+st) * time.Second / 100 // clock ticks: USER_HZ is 100 on Linux
	}
	return self, plugins
}
