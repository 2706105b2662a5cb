package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/assay-eval/assay/host/verify"
)

// TestResumedLineCountsTurns: the resumed note agrees in number with the
// count of reused turns.
func TestResumedLineCountsTurns(t *testing.T) {
	for n, want := range map[int]string{
		1: "(resumed: 1 recorded turn reused, its input unchanged)",
		2: "(resumed: 2 recorded turns reused, their inputs unchanged)",
	} {
		var b bytes.Buffer
		printCandidate(&b, &verify.Outcome{Candidate: "c1"}, &verify.CandidateReport{Reused: n})
		if first, _, _ := strings.Cut(strings.TrimPrefix(b.String(), "\n"), "\n"); !strings.Contains(first, want) {
			t.Errorf("reused %d: got %q, want it to contain %q", n, first, want)
		}
	}
}
