package pluginhost_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/plugins/toolsequence"
	"github.com/assay-eval/assay/sdk/batchrun"
)

// TestEvidenceFromSameInAndOutOfProcess scores BenchmarkScore1000's turns
// with the real tool_sequence binary, which answers the host's request
// (reads_evidence_from) with the evidence its sequence checks repeat sent
// as a reference to the first (docs/protocol.md, "Score: batches"), and in
// process: the results must be identical, and each check's evidence its
// own.
func TestEvidenceFromSameInAndOutOfProcess(t *testing.T) {
	t.Parallel()
	cases := benchCases(64)
	got := scoreToolSequenceBothWays(t, cases)
	repeated := 0
	for i := range cases {
		checks := got[i].Result.Checks
		for j := 1; j < len(checks); j++ {
			if len(checks[j].Evidence) > 0 && slices.Equal(checks[j].Evidence, checks[0].Evidence) {
				repeated++
				checks[j].Evidence[0] = "changed"
				if checks[0].Evidence[0] == "changed" {
					t.Fatalf("Score(%s): changing check %d's evidence changed check 0's", cases[i].ID, j)
				}
			}
		}
	}
	if repeated == 0 {
		t.Error("no check repeats an earlier one's evidence: the cases do not exercise evidence_from")
	}
}

// scoreToolSequenceBothWays scores cases with the real tool_sequence
// binary and in process, fails t unless every case scores without error
// and the same both ways, and returns the out-of-process outcomes. It
// skips t when plugins/toolsequence did not build.
func scoreToolSequenceBothWays(t *testing.T, cases []*scorer.Case) []batchrun.Outcome {
	t.Helper()
	if !toolSequence {
		t.Skip("plugins/toolsequence did not build")
	}
	oop := pluginhost.New(manifest(), pluginhost.WithCallTimeout(time.Minute))
	defer oop.Close()
	inp := pluginhost.New(&pluginhost.Manifest{}, pluginhost.WithInProcess(toolsequence.New()))
	defer inp.Close()
	got := oop.Score(context.Background(), "tool_sequence", cases)
	want := inp.Score(context.Background(), "tool_sequence", cases)
	for i := range cases {
		if got[i].Err != nil || want[i].Err != nil {
			t.Fatalf("Score(%s) errors: out of process %v, in process %v", cases[i].ID, got[i].Err, want[i].Err)
		}
		if diff := cmp.Diff(want[i].Result, got[i].Result); diff != "" {
			t.Errorf("Score(%s) (-in process +out of process):\n%s", cases[i].ID, diff)
		}
	}
	return got
}
