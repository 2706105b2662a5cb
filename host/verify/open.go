package verify

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Diagnostic codes of a refused input file (docs/run-input.md, "Paths stay
// inside the run").
const (
	codeOutsideRun = "input.outside_run"
	codeNotRegular = "input.not_regular"
)

var (
	// errOutsideRun is a path that leaves the directory it must stay in.
	errOutsideRun = errors.New("the path leaves the run's directory (give --allow-outside-paths to allow it)")
	// errNotRegular is a path that is not a regular file (a FIFO, a device,
	// a directory, a socket).
	errNotRegular = errors.New("not a regular file")
)

// ReadOption changes how a run's input is read.
type ReadOption func(*readConfig)

type readConfig struct {
	allowOutside bool
	isTask       func(label string) bool // the pack's tasks: an indexed candidate counts its turns of them
}

// withTasks lets indexTurnsFile count each candidate's turns of the pack's
// tasks, so its pass can decode them a chunk at a time (Engine.Verify).
func withTasks(isTask func(string) bool) ReadOption {
	return func(c *readConfig) { c.isTask = isTask }
}

// WithOutsidePaths lets the paths of a run leave its directory
// (`assay verify --allow-outside-paths`); they are still read only when
// they are regular files.
func WithOutsidePaths(allow bool) ReadOption {
	return func(c *readConfig) { c.allowOutside = allow }
}

func readConfigOf(opts []ReadOption) readConfig {
	var c readConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

// openInput opens path for reading when it is a regular file and, when
// root is not empty, when it resolves (symbolic links followed) inside
// root. It never blocks on a FIFO or a device: the path is checked before
// it is opened, opened non-blocking, and the open file checked again.
func openInput(path, root string) (*os.File, error) {
	return openInputIn(path, root, "")
}

// openInputIn is openInput with root's own resolution given as realRoot
// when it is known ("" when not): a run's many files resolve the
// directory they must stay in once, not once a file.
func openInputIn(path, root, realRoot string) (*os.File, error) {
	if root != "" {
		if err := inside(path, root, realRoot); err != nil {
			return nil, err
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s: %w", path, fileKind(st.Mode()), errNotRegular)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fst, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fst.Mode().IsRegular() || !os.SameFile(st, fst) {
		f.Close()
		return nil, fmt.Errorf("%s changed while it was opened: %w", path, errNotRegular)
	}
	return f, nil
}

// inside checks that path, with every symbolic link resolved, is inside
// root (also resolved: realRoot, or resolved here when it is "").
func inside(path, root, realRoot string) error {
	if realRoot == "" {
		var err error
		if realRoot, err = filepath.EvalSymlinks(root); err != nil {
			return err
		}
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// A dangling link or an absent file: say where it points when
			// that is outside, else that it does not exist.
			if abs, aerr := filepath.Abs(path); aerr == nil && !within(mustAbs(root), abs) {
				return fmt.Errorf("%s is outside %s: %w", path, root, errOutsideRun)
			}
		}
		return err
	}
	if !within(realRoot, real) {
		if real != path {
			return fmt.Errorf("%s resolves to %s, outside %s: %w", path, real, root, errOutsideRun)
		}
		return fmt.Errorf("%s is outside %s: %w", path, root, errOutsideRun)
	}
	return nil
}

// resolveRoot is root with its symbolic links resolved, for the turns that
// must stay in it; "" when root is "" or cannot be resolved (each file
// then resolves it, and reports why it cannot).
func resolveRoot(root string) string {
	if root == "" {
		return ""
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return ""
	}
	return real
}

func mustAbs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// within reports whether path is root or below it (both clean and absolute,
// or both resolved the same way).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// inputCode is the diagnostic code of a file that could not be read: a
// refusal's own code, else fallback.
func inputCode(err error, fallback string) string {
	switch {
	case errors.Is(err, errOutsideRun):
		return codeOutsideRun
	case errors.Is(err, errNotRegular):
		return codeNotRegular
	}
	return fallback
}

// readInput reads a whole input file opened by openInput, refusing one of
// more than limit bytes (errTooLarge) without reading it.
func readInput(path, root string, limit int64) ([]byte, error) {
	return readInputIn(path, root, "", limit)
}

// readInputIn is readInput with root's resolution, as openInputIn.
func readInputIn(path, root, realRoot string, limit int64) ([]byte, error) {
	f, err := openInputIn(path, root, realRoot)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, &tooLargeError{path: path, size: st.Size(), limit: limit}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &tooLargeError{path: path, size: int64(len(b)), limit: limit}
	}
	return b, nil
}

// tooLargeError is an input file over its size limit.
type tooLargeError struct {
	path        string
	size, limit int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s is %s, over the limit of %s", e.path, mib(e.size), mib(e.limit))
}

func mib(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
