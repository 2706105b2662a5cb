package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/trace"
	"testing"
)

// TestExecutionTrace: with ASSAY_EXECTRACE set, a command writes a Go
// execution trace of its whole run there (for `go tool trace`: where each
// goroutine waited, docs/performance.md), and its own output is as without.
func TestExecutionTrace(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("go test -trace is tracing this process: a second trace cannot start")
	}
	path := filepath.Join(t.TempDir(), "trace.out")
	t.Setenv("ASSAY_EXECTRACE", path)
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), []string{"version"}, &out, &errOut); code != ExitOK {
		t.Fatalf("assay version = exit %d: %s", code, errOut.String())
	}
	if out.Len() == 0 {
		t.Errorf("assay version printed nothing")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no trace written: %v", err)
	}
	// Every execution trace opens with its format's header ("go 1.NN trace").
	if head := b[:min(len(b), 16)]; !bytes.HasPrefix(head, []byte("go 1.")) || !bytes.Contains(head, []byte(" trace")) {
		t.Errorf("%s does not open as a Go execution trace: %q", path, b[:min(len(b), 16)])
	}
}
