package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// runPeakRSS runs cmd and returns its peak resident memory in bytes, or 0
// where /proc is not there.
//
// wait4's rusage cannot be used: Go starts a child with vfork, and Linux
// then counts the parent's resident set (this test binary's, hundreds of MB
// under -race) into the child's ru_maxrss. VmHWM in /proc/PID/status is the
// high-water mark of the child's own address space, sampled every few
// milliseconds until it exits; a peak in its last milliseconds can be
// missed.
func runPeakRSS(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status"
	var peak int64
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if hwm := vmHWM(status); hwm > peak {
			peak = hwm
		}
		select {
		case err := <-done:
			return peak, err
		case <-tick.C:
		}
	}
}

// vmHWM reads the VmHWM line of a /proc status file, in bytes.
func vmHWM(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
