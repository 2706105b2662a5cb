package jsonpos

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/assay-eval/assay/pkg/diag"
)

// Source is a JSON text and where it sits in a file, for positions.
type Source struct {
	File string
	// Src is the file's bytes (for line and column); the JSON text read
	// starts at Base in it.
	Src  []byte
	Base int
	// Line, when positive, is the file line Src starts on, for a text
	// that is one line of a larger file such as a turns line.
	Line int
}

// Pos is the position of offset off of the JSON text (off+Base in Src).
func (s Source) Pos(off int) diag.Pos {
	p := diag.OffsetPos(s.File, s.Src, s.Base+off)
	if s.Line > 0 {
		p.Line += s.Line - 1
	}
	return p
}

// Errorf is an error diagnostic at offset off.
func (s Source) Errorf(off int, code, format string, args ...any) diag.Diagnostic {
	return diag.Errorf(s.Pos(off), code, format, args...)
}

// Warnf is a warning diagnostic at offset off.
func (s Source) Warnf(off int, code, format string, args ...any) diag.Diagnostic {
	return diag.Warnf(s.Pos(off), code, format, args...)
}

// ErrPos is where err happened: the offset of an *Error, else the start
// of the text.
func (s Source) ErrPos(err error) diag.Pos {
	var e *Error
	if errors.As(err, &e) {
		return s.Pos(e.Off)
	}
	return s.Pos(0)
}

// Diag is an error diagnostic for err at ErrPos, its message prefixed by
// what (when not empty).
func (s Source) Diag(code, what string, err error) diag.Diagnostic {
	if what == "" {
		return diag.Errorf(s.ErrPos(err), code, "%v", err)
	}
	return diag.Errorf(s.ErrPos(err), code, "%s: %v", what, err)
}

// ReadFile reads the file at path when it holds at most limit bytes; a
// larger file is an error wrapping ErrTooLarge, read no further than the limit.
// Only a regular file is read: a FIFO or a device is an error, returned
// without blocking on it.
func ReadFile(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !os.SameFile(st, fst) {
		return nil, fmt.Errorf("%s changed while it was opened", path)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %w: more than %s", path, ErrTooLarge, sizeText(limit))
	}
	src, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(src)) > limit {
		return nil, fmt.Errorf("%s: %w: more than %s", path, ErrTooLarge, sizeText(limit))
	}
	return src, nil
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
