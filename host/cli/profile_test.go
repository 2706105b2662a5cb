package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/trace"
	"strings"
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
	if errOut.Len() != 0 {
		t.Errorf("assay version with a trace wrote to stderr: %s", errOut.String())
	}
}

// TestProfileCannotStart: a profile or trace whose file cannot be made is
// said on stderr, and the command runs and exits as without it.
func TestProfileCannotStart(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("go test -trace is tracing this process")
	}
	for _, env := range []string{"ASSAY_EXECTRACE", "ASSAY_CPUPROFILE"} {
		t.Run(env, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "no-such-dir", "out")
			t.Setenv(env, path)
			var out, errOut bytes.Buffer
			if code := Main(context.Background(), []string{"version"}, &out, &errOut); code != ExitOK {
				t.Fatalf("assay version = exit %d: %s", code, errOut.String())
			}
			if out.Len() == 0 {
				t.Errorf("assay version printed nothing")
			}
			if msg := errOut.String(); !strings.Contains(msg, env) || !strings.Contains(msg, "no-such-dir") || !strings.Contains(msg, "running without it") {
				t.Errorf("stderr = %q, want %s, the path and that the command runs without it", msg, env)
			}
		})
	}
}
