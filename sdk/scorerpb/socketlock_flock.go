//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package scorerpb

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockSocketDir locks dir for as long as the returned file stays open. The
// lock file is locked under another name and then renamed, so that a sweep
// never sees the lock file of a live run unlocked.
func lockSocketDir(dir string) (*os.File, error) {
	tmp := filepath.Join(dir, socketLockName+".new")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, socketLockName)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// lockStaleSocketDir locks dir's lock file when it exists and no process
// holds its lock (the directory is stale), and returns it; the caller
// closes it to release the lock. It is nil when dir is not stale.
func lockStaleSocketDir(dir string) *os.File {
	f, err := os.OpenFile(filepath.Join(dir, socketLockName), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil
	}
	return f
}
