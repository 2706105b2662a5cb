//go:build linux

package pluginhost_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/pkg/scorer"
)

// TestExecWhatWasHashed is the swap race of issue 14 item 1: while the host
// launches the registered plugin again and again, another goroutine keeps
// renaming an unregistered binary (test_marker, which leaves a MARKER-<pid>
// file the moment it runs) and the registered one over the manifest's file.
// Each launch either runs the registered binary or refuses a sha256
// mismatch; the unregistered binary never runs.
func TestExecWhatWasHashed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "assay-scorer-test_env")
	good, evil := filepath.Join(dir, "good"), filepath.Join(dir, "evil")
	copyFile(t, bin("test_env"), good)
	copyFile(t, bin("test_marker"), evil)
	copyFile(t, bin("test_env"), target)
	// The marker binary does leave its marker when it runs.
	probe := filepath.Join(t.TempDir(), "probe")
	copyFile(t, bin("test_marker"), probe)
	_ = exec.Command(probe).Run()
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(probe), "MARKER-*")); len(m) != 1 {
		t.Fatalf("test_marker run directly left markers %v, want one", m)
	}

	e := base.Entries[indexOf(t, "test_env")]
	m := &pluginhost.Manifest{Dir: dir, Entries: []pluginhost.Entry{e}}
	var stop atomic.Bool
	swapped := make(chan int)
	go func() {
		n := 0
		for !stop.Load() {
			for i, src := range []string{evil, good} {
				tmp := filepath.Join(dir, fmt.Sprintf(".swap-%d", i))
				if err := os.Link(src, tmp); err == nil {
					_ = os.Rename(tmp, target)
					n++
				}
			}
		}
		swapped <- n
	}()
	const tries = 48
	var ran, refused int
	for range tries {
		h := pluginhost.New(m)
		_, err := h.Describe(context.Background(), "test_env")
		h.Close()
		switch {
		case err == nil:
			ran++
		case errors.Is(err, pluginhost.ErrChecksum):
			refused++
		default:
			t.Errorf("Describe during the swap race = %v, want success or ErrChecksum", err)
		}
	}
	stop.Store(true)
	n := <-swapped
	markers, _ := filepath.Glob(filepath.Join(dir, "MARKER-*"))
	if len(markers) != 0 {
		t.Errorf("the unregistered binary ran %d time(s) in %d launches (%v)", len(markers), tries, markers)
	}
	t.Logf("%d launches: %d ran the registered binary, %d refused a sha256 mismatch; %d renames", tries, ran, refused, n)
}

func indexOf(t *testing.T, id scorer.ID) int {
	t.Helper()
	for i, e := range base.Entries {
		if e.ID == id {
			return i
		}
	}
	t.Fatalf("%s is not registered", id)
	return -1
}

// TestPluginMemoryCapped covers issue 14 item 4: a plugin that allocates
// without bound dies at its address-space limit; the host lives on and the
// case is a scorer error (a crash, not a hang).
func TestPluginMemoryCapped(t *testing.T) {
	t.Parallel()
	h := pluginhost.New(manifest(), pluginhost.WithCallTimeout(30*time.Second),
		pluginhost.WithLimits(pluginhost.Limits{AddressSpace: 2 << 30, MaxChecks: pluginhost.DefaultMaxChecks}))
	defer h.Close()
	begin := time.Now()
	outs := h.Score(context.Background(), "test_hog", labelled("hog", "a"))
	if err := outs[0].Err; err == nil || !errors.Is(err, pluginhost.ErrCrashed) {
		t.Errorf("Score(hog) error = %v, want the plugin crashed (ErrCrashed)", err)
	}
	if outs[1].Err != nil {
		t.Errorf("Score(a) beside the hog error = %v, want it scored", outs[1].Err)
	}
	t.Logf("the hog was failed after %v", time.Since(begin))
}

// TestPluginGroupKilled covers issue 14 item 4: 20 `sleep 600` processes a
// plugin started do not outlive the host's Close.
func TestPluginGroupKilled(t *testing.T) {
	t.Parallel()
	h := pluginhost.New(manifest())
	outs := h.Score(context.Background(), "test_hog", labelled("fork"))
	if outs[0].Err != nil || len(outs[0].Result.Checks) != 1 {
		h.Close()
		t.Fatalf("Score(fork) = %+v, want a result with the children's pids", outs[0])
	}
	var pids []int
	for _, f := range strings.Fields(outs[0].Result.Checks[0].Detail) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, p)
	}
	if len(pids) != 20 || !alive(pids[0]) {
		t.Fatalf("the plugin started %v, want 20 live sleeps", pids)
	}
	h.Close()
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range pids {
		for alive(p) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(p) {
			t.Errorf("child %d of the plugin outlived the host's Close", p)
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
