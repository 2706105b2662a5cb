package sdktest

import (
	"context"
	"testing"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/conformance"
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
	rep, err := conformance.CheckScorer(context.Background(), s, cases...)
	if err != nil {
		t.Fatalf("sdktest.Run: %v", err)
	}
	for _, r := range rep {
		t.Run(r.Name, func(t *testing.T) {
			for _, p := range r.Problems {
				t.Errorf("%s: %s", r.Name, p)
			}
		})
	}
}

// RunBinary launches the plugin binary at path and runs every conformance
// check against it, reporting each problem through t.
func RunBinary(t TB, path string, cases ...*sdk.Case) {
	t.Helper()
	rep, err := conformance.CheckBinary(context.Background(), path, nil, cases...)
	if err != nil {
		t.Fatalf("sdktest.RunBinary(%q): %v", path, err)
	}
	for _, r := range rep {
		for _, p := range r.Problems {
			t.Errorf("%s: %s: %s", path, r.Name, p)
		}
	}
}

// Cases builds the generic cases the checks score when given none (see
// conformance.Cases).
func Cases(d sdk.Description) []*sdk.Case { return conformance.Cases(d) }
