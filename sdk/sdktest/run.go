package sdktest

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/assay-eval/assay/sdk"
)

// TB is the part of testing.TB the Run functions use.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Run serves s in-process over real gRPC and runs every conformance check,
// each as a subtest; with no cases it uses Cases(s.Describe()). It also
// calls s.Score directly with a cancelled context, which must return
// promptly. Run the test with -race so the concurrency check means something.
func Run(t *testing.T, s sdk.Scorer, cases ...*sdk.Case) {
	t.Helper()
	c, stop, err := Serve(s)
	if err != nil {
		t.Fatalf("sdktest.Run: %v", err)
	}
	defer stop()
	rep := Check(context.Background(), c, cases...)
	for _, r := range rep {
		t.Run(r.Name, func(t *testing.T) {
			for _, p := range r.Problems {
				t.Errorf("%s: %s", r.Name, p)
			}
		})
	}
	t.Run("direct_cancellation", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		all := cases
		if len(all) == 0 {
			all = Cases(s.Describe())
		}
		for _, cs := range all {
			if err := returnsPromptly(func() { _, _ = s.Score(ctx, cs) }); err != "" {
				t.Errorf("Score(cancelled context, case %q) %s", cs.ID, err)
			}
		}
	})
}

// RunBinary launches the plugin binary at path and runs every conformance
// check against it, reporting each problem through t.
func RunBinary(t TB, path string, cases ...*sdk.Case) {
	t.Helper()
	rep, err := CheckBinary(context.Background(), path, nil, cases...)
	if err != nil {
		t.Fatalf("sdktest.RunBinary(%q): %v", path, err)
	}
	for _, r := range rep {
		for _, p := range r.Problems {
			t.Errorf("%s: %s: %s", path, r.Name, p)
		}
	}
}

// CheckBinary launches the plugin binary at path (its log to stderr, nil to
// discard) and runs every conformance check against it. The error is set only
// when the binary cannot be launched.
func CheckBinary(ctx context.Context, path string, stderr io.Writer, cases ...*sdk.Case) (Report, error) {
	c, stop, err := Launch(path, stderr)
	if err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	defer stop()
	return Check(ctx, c, cases...), nil
}
