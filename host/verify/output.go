package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// resultsWriter streams results.json, one candidate at a time, to a
// temporary file renamed into place when complete.
type resultsWriter struct {
	f     *os.File
	path  string
	first bool
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
	return &resultsWriter{f: f, path: path, first: true}, nil
}

func (w *resultsWriter) add(rs []TurnResult) error {
	for i := range rs {
		b, err := json.MarshalIndent(&rs[i], "  ", "  ")
		if err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
		sep := ",\n  "
		if w.first {
			sep, w.first = "\n  ", false
		}
		if _, err := w.f.WriteString(sep); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
		if _, err := w.f.Write(b); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
	}
	return nil
}

func (w *resultsWriter) close() error {
	end := "\n]\n"
	if w.first {
		end = "]\n"
	}
	if _, err := w.f.WriteString(end); err != nil {
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
