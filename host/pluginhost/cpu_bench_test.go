package pluginhost_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) of this process and of its live
// child processes (the plugins it launched), read from getrusage and
// /proc. It is the load-independent side of a benchmark on a shared
// machine: wall time moves with other work, CPU time much less. Off Linux
// (no /proc) the children count as zero.
func cpuTime() (self, children time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	me := strconv.Itoa(os.Getpid())
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... utime(14) stime(15), comm may hold spaces
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 || f[1] != me {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		children += time.Duration(ut+st) * time.Second / 100 // clock ticks: USER_HZ is 100 on Linux
	}
	return self, children
}
