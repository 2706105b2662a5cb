package scorerpb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// ErrNotPrivate is returned when the directory for the plugins' sockets
// cannot be made private to the user running the host.
var ErrNotPrivate = errors.New("the plugin socket directory is not private")

// MakeSocketDir makes the directory the plugins of one run put their Unix
// sockets in (go-plugin's UnixSocketConfig.TempDir): a new directory in the
// temporary directory with mode 0700, owned by the user running the host,
// so that only that user (or root) can reach a socket inside it. It refuses
// (ErrNotPrivate, and removes the directory) when the file system does not
// give it those permissions. The caller removes it when the run ends
// (NewSocketDir also removes it when the run was killed outright). Off
// Unix (UnixSockets is false) the plugins listen on TCP behind AutoMTLS and
// the directory's mode is not checked.
func MakeSocketDir() (string, error) {
	dir, err := os.MkdirTemp("", "assay-")
	if err != nil {
		return "", fmt.Errorf("making the plugin socket directory: %w", err)
	}
	if !UnixSockets {
		return dir, nil
	}
	if err := CheckPrivate(dir); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// SocketDir is one run's private directory for plugin sockets
// (MakeSocketDir's), locked while the run holds it: a run killed outright
// (SIGKILL) cannot remove its directory, but its lock dies with it, and the
// next NewSocketDir removes the directory.
type SocketDir struct {
	Path string
	lock *os.File // held until Remove; nil where directories are not locked
}

// NewSocketDir removes the socket directories that runs killed outright
// left in the temporary directory (an assay-* directory of this user, mode
// 0700, whose lock no process holds; a directory without a lock file, such
// as one made by MakeSocketDir, is left alone), then makes a new directory
// as MakeSocketDir does and locks it until Remove. Locks are flock(2)
// locks, which the kernel releases when the process dies; off the systems
// that have them the directory is not locked and nothing is removed.
func NewSocketDir() (*SocketDir, error) {
	sweepSocketDirs(os.TempDir())
	dir, err := MakeSocketDir()
	if err != nil {
		return nil, err
	}
	lock, err := lockSocketDir(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("locking the plugin socket directory: %w", err)
	}
	return &SocketDir{Path: dir, lock: lock}, nil
}

// Remove removes the directory with whatever a killed plugin left in it,
// then releases its lock.
func (d *SocketDir) Remove() error {
	err := os.RemoveAll(d.Path)
	if d.lock != nil {
		d.lock.Close()
	}
	return err
}

// socketLockName is the lock file in a run's socket directory.
const socketLockName = ".lock"

// sweepSocketDirs removes the socket directories in tmp whose run died
// without removing them. Only a private directory of this user with a lock
// file that can be locked is removed; anything it cannot read is left.
func sweepSocketDirs(tmp string) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "assay-") {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		if CheckPrivate(dir) != nil {
			continue
		}
		if lock := lockStaleSocketDir(dir); lock != nil {
			os.RemoveAll(dir)
			lock.Close()
		}
	}
}

// CheckPrivate checks that dir is a directory (not a symlink) with mode
// 0700 owned by the effective user (on Unix).
func CheckPrivate(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("checking the plugin socket directory: %w", err)
	}
	if !st.IsDir() || st.Mode().Perm() != 0o700 {
		return fmt.Errorf("%w: %s has mode %s, want drwx------", ErrNotPrivate, dir, st.Mode())
	}
	if uid, ok := owner(st); ok && uid != os.Geteuid() {
		return fmt.Errorf("%w: %s belongs to uid %d, not to uid %d running the host", ErrNotPrivate, dir, uid, os.Geteuid())
	}
	return nil
}

// AddrCheck checks a plugin's go-plugin handshake line for a host that
// connects without TLS: the plugin must announce a Unix socket inside the
// run's private socket directory, and no TLS certificate. It sits between
// the plugin's stdout and go-plugin (Stdout) and in the runner's
// PluginToHost, which go-plugin calls with the announced address after the
// line has been read.
type AddrCheck struct {
	dir string

	mu   sync.Mutex
	line []byte // the first line as read so far
	done bool   // the first line is complete
}

// NewAddrCheck returns the check for plugins whose sockets must be in dir.
func NewAddrCheck(dir string) *AddrCheck { return &AddrCheck{dir: dir} }

// RunnerPipes is the shared start of a go-plugin runner (RunnerFunc) for
// cmd: it returns cmd's stdout and stderr pipes and, when the host connects
// without TLS (UnixSockets and not tls), the AddrCheck for socketDir, with
// stdout read through it; with AutoMTLS (tls, or off Unix) the check is nil:
// any address, as go-plugin has it.
func RunnerPipes(cmd *exec.Cmd, socketDir string, tls bool) (stdout, stderr io.ReadCloser, check *AddrCheck, err error) {
	if stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, nil, nil, err
	}
	if stderr, err = cmd.StderrPipe(); err != nil {
		return nil, nil, nil, err
	}
	if UnixSockets && !tls {
		check = NewAddrCheck(socketDir)
		stdout = check.Stdout(stdout)
	}
	return stdout, stderr, check, nil
}

// maxLine bounds how much of the first line is kept for the check.
const maxLine = 64 << 10

// Stdout returns r, noting its first line on the way to go-plugin.
func (h *AddrCheck) Stdout(r io.ReadCloser) io.ReadCloser { return &handshakeReader{r, h} }

type handshakeReader struct {
	io.ReadCloser
	h *AddrCheck
}

func (r *handshakeReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.h.note(p[:n])
	return n, err
}

func (h *AddrCheck) note(b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b, h.done = b[:i], true
	}
	if room := maxLine - len(h.line); room > 0 {
		h.line = append(h.line, b[:min(len(b), room)]...)
	}
}

// Announced says whether the plugin wrote anything on stdout.
func (h *AddrCheck) Announced() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.line) > 0 || h.done
}

// RetryWithTLS says whether a launch without TLS that failed after waited
// (of the start timeout) should be made once more with AutoMTLS: the plugin
// wrote nothing on stdout and exited or closed it in time. Such a plugin
// may be one that serves only behind AutoMTLS (docs/protocol.md,
// "Handshake"), which says so by exiting; one that ran out of start time is
// hanging, and a second launch would cost the timeout twice. A nil check
// (a launch with AutoMTLS already) is never retried.
func (h *AddrCheck) RetryWithTLS(waited, timeout time.Duration) bool {
	return h != nil && !h.Announced() && waited < timeout
}

// PluginToHost is the runner's go-plugin address translation: it accepts
// the address only when it is a Unix socket inside the directory and the
// handshake line carries no certificate. A nil check accepts any address
// (a runner launched with AutoMTLS).
func (h *AddrCheck) PluginToHost(network, addr string) (string, string, error) {
	if h == nil {
		return network, addr, nil
	}
	h.mu.Lock()
	line := string(h.line)
	h.mu.Unlock()
	if parts := strings.Split(strings.TrimSpace(line), "|"); len(parts) >= 6 && len(parts[5]) > 50 {
		return "", "", fmt.Errorf("the plugin serves TLS (its handshake carries a certificate) although the host offered none: " +
			"the host talks to its plugins without TLS on a private Unix socket (docs/protocol.md); rebuild the plugin with the current SDK")
	}
	if network != "unix" {
		return "", "", fmt.Errorf("the plugin listens on %s %s: the host connects only to a Unix socket in the directory it made for the plugin (%s)", network, addr, h.dir)
	}
	if rel, err := filepath.Rel(h.dir, addr); err != nil || rel == "." || strings.HasPrefix(rel, "..") || !filepath.IsAbs(addr) {
		return "", "", fmt.Errorf("the plugin listens on the Unix socket %s: the host connects only to a socket in the directory it made for the plugin (%s)", addr, h.dir)
	}
	return network, addr, nil
}

// UnixSockets says whether plugins talk to the host on a Unix socket in a
// private directory, without TLS (everywhere but Windows, where go-plugin
// listens on TCP and the host keeps go-plugin's AutoMTLS).
const UnixSockets = runtime.GOOS != "windows"
