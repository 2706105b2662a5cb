package verify

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// resultsWriter streams results.json, one candidate at a time, to a
// temporary file renamed into place when complete. Each result is written
// as json.MarshalIndent writes it, from the JSON its row is written with
// (appendTurnResult) indented by appendIndent, into a buffer that reaches
// the file a block at a time.
type resultsWriter struct {
	f     *os.File
	w     *bufio.Writer
	path  string
	first bool
	buf   []byte // the compact JSON of the result being written
	out   []byte // the same, indented
}

func newResultsWriter(dir string) (*resultsWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("writing results: %w", err)
	}
	path := filepath.Join(dir, "results.json")
	f, err := os.CreateTemp(dir, ".results.json.*")
	if err != nil {
		return nil, fmt.Errorf("writing results: %w", err)
	}
	if _, err := f.WriteString("["); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing results: %w", err)
	}
	return &resultsWriter{f: f, w: bufio.NewWriterSize(f, 64<<10), path: path, first: true}, nil
}

func (w *resultsWriter) add(rs []TurnResult) error {
	for i := range rs {
		b, _, _, ok := appendTurnResult(w.buf[:0], &rs[i])
		w.buf = b
		if ok {
			w.out = appendIndent(w.out[:0], b, "  ", "  ")
			b = w.out
		} else {
			var err error
			if b, err = json.MarshalIndent(&rs[i], "  ", "  "); err != nil {
				return fmt.Errorf("writing results: %w", err)
			}
		}
		sep := ",\n  "
		if w.first {
			sep, w.first = "\n  ", false
		}
		w.w.WriteString(sep)
		if _, err := w.w.Write(b); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
	}
	return nil
}

// appendIndent appends src, JSON as json.Marshal writes it (no white space
// outside strings), indented as json.Indent indents it.
func appendIndent(dst, src []byte, prefix, indent string) []byte {
	newline := func(dst []byte, depth int) []byte {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, indent...)
		}
		return dst
	}
	depth := 0
	open := false // after '{' or '[': the indent waits, so that empty ones stay {} and []
	for i := 0; i < len(src); i++ {
		c := src[i]
		if open && c != '}' && c != ']' {
			open = false
			depth++
			dst = newline(dst, depth)
		}
		switch c {
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			dst = append(dst, src[i:min(j+1, len(src))]...)
			i = j
		case '{', '[':
			open = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			dst = newline(dst, depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				dst = newline(dst, depth)
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func (w *resultsWriter) close() error {
	end := "\n]\n"
	if w.first {
		end = "]\n"
	}
	w.w.WriteString(end)
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	if err := os.Rename(w.f.Name(), w.path); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	w.f = nil
	return nil
}

// abort removes an unfinished results file.
func (w *resultsWriter) abort() {
	if w != nil && w.f != nil {
		w.f.Close()
		os.Remove(w.f.Name())
	}
}

// writeJSON writes v as indented JSON, atomically.
func writeJSON(path string, v any) error {
	return writeFileAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// writeFileAtomic writes the file at path with write, atomically.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := write(tmp); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
