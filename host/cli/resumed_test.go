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

// TestLabelLines: each list of a candidate's turn labels is a line of the
// text output naming at most maxLabelsShown of them and counting the rest;
// an empty list prints nothing.
func TestLabelLines(t *testing.T) {
	labels := func(n int) []string {
		var ls []string
		for i := range n {
			ls = append(ls, "t"+strings.Repeat("x", i%3)+string(rune('a'+i%26)))
		}
		return ls
	}
	tests := []struct {
		name string
		cs   verify.CandidateReport
		want []string
	}{
		{"none", verify.CandidateReport{}, nil},
		{"scored on retry", verify.CandidateReport{ScoredOnRetryLabels: []string{"a", "b"}},
			[]string{"  scored on a retry (after a lost batch or a failed first try; each turn's diagnostics say how): a, b"}},
		{"rescored, retried, ignored", verify.CandidateReport{RescoredLabels: []string{"r"}, RetriedLabels: []string{"u"}, IgnoredLabels: []string{"i\x1b"}},
			[]string{"  rescored (inputs changed since recorded): r", "  retried (unscored when recorded): u",
				`  ignored (not a task of the pack; neither scored nor recorded): i\x1b`}},
		{"twenty", verify.CandidateReport{ScoredOnRetryLabels: labels(20)},
			[]string{"  scored on a retry (after a lost batch or a failed first try; each turn's diagnostics say how): " + strings.Join(labels(20), ", ")}},
		{"twenty-three", verify.CandidateReport{ScoredOnRetryLabels: labels(23)},
			[]string{"  scored on a retry (after a lost batch or a failed first try; each turn's diagnostics say how): " + strings.Join(labels(20), ", ") +
				" and 3 more (23 in all; scored_on_retry_labels in summary.json and --format json)"}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		printCandidate(&b, &verify.Outcome{Candidate: "c1"}, &tt.cs)
		var got []string
		for _, line := range strings.Split(b.String(), "\n") {
			for _, p := range []string{"  rescored", "  retried", "  scored on a retry", "  ignored"} {
				if strings.HasPrefix(line, p) {
					got = append(got, line)
				}
			}
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s: lines\n%s\nwant\n%s", tt.name, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}
