package pack

import (
	"testing"

	"github.com/assay-eval/assay/pkg/diag"
)

// For the external tests of this package (package pack_test), which may
// import packages that import pack.
var (
	CheckGolden = checkGolden
	TestCatalog = testCatalog
)

// SplitInput is a pack of TestSplitSameAsWhole's corpus.
type SplitInput struct {
	Name string
	Src  []byte
}

// SplitInputs is TestSplitSameAsWhole's corpus.
func SplitInputs(t testing.TB) []SplitInput {
	var out []SplitInput
	for _, in := range splitInputs(t) {
		out = append(out, SplitInput{in.name, in.src})
	}
	return out
}

// ValidateSource is Validate on src, read from file; held is how many tasks
// the pack kept (none when they were streamed).
func ValidateSource(file string, src []byte, opts Options) (s *Summary, list diag.List, held int) {
	p, tasks, list, _ := parseWith(file, src, opts, true, true)
	if p == nil {
		return nil, list, 0
	}
	return &Summary{SHA256: p.SHA256, Tasks: tasks}, list, len(p.Tasks)
}

// ValidateOffHeap is Validate reading any non-empty regular file off the
// heap where the platform allows it.
func ValidateOffHeap(path string, opts Options) (*Summary, diag.List) { return validate(path, opts, 1) }
