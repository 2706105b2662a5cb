//go:build linux

package scorerpb_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/sdk/scorerpb"
)

// socketChildEnv makes the test binary a run that makes its socket
// directory, prints its path and waits to be killed.
const socketChildEnv = "SCORERPB_TEST_SOCKET_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(socketChildEnv) != "" {
		d, err := scorerpb.NewSocketDir()
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(d.Path + "\n")
		select {}
	}
	os.Exit(m.Run())
}

// TestSocketDirSweep: the socket directory of a run killed with SIGKILL is
// removed by the next run's NewSocketDir; the directory of a live run (in
// this process or another), a directory without a lock file, a file and a
// symbolic link named assay-* are not; Remove removes the run's own.
func TestSocketDirSweep(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	killed := childSocketDir(t, true)
	alive := childSocketDir(t, false)
	live, err := scorerpb.NewSocketDir()
	if err != nil {
		t.Fatalf("NewSocketDir() error = %v", err)
	}
	plain, err := scorerpb.MakeSocketDir() // no lock file: not ours to judge
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "assay-file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	target := t.TempDir() // looks like a dead run's directory, behind a link
	if err := os.Chmod(target, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, ".lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(tmp, "assay-link")); err != nil {
		t.Fatal(err)
	}

	next, err := scorerpb.NewSocketDir()
	if err != nil {
		t.Fatalf("NewSocketDir() error = %v", err)
	}
	if _, err := os.Lstat(killed); !os.IsNotExist(err) {
		t.Errorf("the killed run's directory %s: Lstat = %v, want it removed", killed, err)
	}
	for _, keep := range []string{alive, live.Path, plain, filepath.Join(tmp, "assay-file"), filepath.Join(tmp, "assay-link"), filepath.Join(target, ".lock"), next.Path} {
		if _, err := os.Lstat(keep); err != nil {
			t.Errorf("Lstat(%s) = %v, want it kept", keep, err)
		}
	}
	if err := next.Remove(); err != nil {
		t.Errorf("Remove() = %v", err)
	}
	if _, err := os.Lstat(next.Path); !os.IsNotExist(err) {
		t.Errorf("after Remove, Lstat(%s) = %v, want it removed", next.Path, err)
	}
	live.Remove()
}

// childSocketDir starts a run in another process and returns its socket
// directory; with kill, the run is killed with SIGKILL (no cleanup),
// otherwise it stays alive until the test ends.
func childSocketDir(t *testing.T, kill bool) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), socketChildEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	dir := strings.TrimSpace(line)
	if err != nil || !strings.HasPrefix(dir, "/") {
		t.Fatalf("the child run printed %q, %v; want its socket directory", line, err)
	}
	if kill {
		cmd.Process.Kill()
		cmd.Wait()
		if _, err := os.Lstat(dir); err != nil {
			t.Fatalf("the killed run's directory is already gone: %v", err)
		}
	}
	return dir
}
