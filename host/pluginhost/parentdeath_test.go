//go:build linux

package pluginhost_test

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestPluginDiesWithHost(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPluginDiesWithHost$")
	cmd.Env = append(os.Environ(), helperEnv+"="+base.Dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pid := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "plugin pid "); ok {
			pid, _ = strconv.Atoi(p)
			break
		}
	}
	if pid == 0 {
		t.Fatalf("the helper host printed no plugin pid")
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("plugin %d is not running while its host is: %v", pid, err)
	}
	defer func() { _ = syscall.Kill(pid, syscall.SIGKILL) }() // when the test fails, do not leave it behind
	cmd.Process.Kill()                                        // SIGKILL: the host gets no chance to clean up
	cmd.Wait()
	for i := 0; i < 100; i++ {
		if err := syscall.Kill(pid, 0); err != nil {
			return // gone
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("plugin %d still runs 5s after its host was killed", pid)
}
