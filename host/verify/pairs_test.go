package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/score"
)

// TestNotDistinguishablePairs: the pairs enumerated from the frontier are
// NotDistinguishable's list, in order, and encode as it does.
func TestNotDistinguishablePairs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		cis  [][]float64
	}{
		{"none", nil},
		{"one", [][]float64{{0.1, 0.2}}},
		{"all overlap", [][]float64{{0.1, 0.5}, {0.2, 0.6}, {0.3, 0.7}, {0.1, 0.9}}},
		{"some overlap", [][]float64{{0.1, 0.2}, {0.15, 0.3}, {0.5, 0.6}, nil, {0.55, 0.9}}},
	} {
		var sums []score.Summary
		var frontier []string
		for i, ci := range tt.cis {
			c := fmt.Sprintf("c%d <&> \"é\u2028", i)
			sums = append(sums, score.Summary{Candidate: c, MeanScoreCI95: ci})
			frontier = append(frontier, c)
		}
		want := NotDistinguishable(frontier, sums)
		p := notDistinguishable(frontier, sums)
		if diff := cmp.Diff(want, p.List()); diff != "" {
			t.Errorf("%s: pairs (-NotDistinguishable +enumerated):\n%s", tt.name, diff)
		}
		wantJSON, _ := json.Marshal(want)
		gotJSON, err := json.Marshal(p)
		if err != nil || !bytes.Equal(wantJSON, gotJSON) {
			t.Errorf("%s: json.Marshal(pairs) = %s, %v, want %s", tt.name, gotJSON, err, wantJSON)
		}
		var back Pairs
		if err := json.Unmarshal(gotJSON, &back); err != nil || !cmp.Equal(want, back.List()) {
			t.Errorf("%s: pairs read back = %v, %v, want %v", tt.name, back.List(), err, want)
		}
	}
}

// TestReportWriteJSON: WriteJSON streams the pairs and writes what an
// indenting json.Encoder writes for the whole report.
func TestReportWriteJSON(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 2, 7} {
		rep := &Report{SchemaVersion: SummarySchemaVersion, Pack: PackRef{Name: "p", Path: "p.yaml"},
			Candidates: []CandidateReport{}, Frontier: []string{}, Errors: []CandidateError{}, ScorerFailures: []ScorerFailure{}}
		var sums []score.Summary
		for i := range n {
			c := fmt.Sprintf("c%d <&> \"é\u2028\n", i)
			sums = append(sums, score.Summary{Candidate: c, MeanScoreCI95: []float64{0.1, 0.5}})
			cr := CandidateReport{Summary: sums[i], RescoredLabels: []string{"a<b", "é"}, RetriedLabels: []string{},
				Paired: &score.Paired{Baseline: "b", CI95: []float64{-0.1, 0.2}}}
			cr.Slices = map[string]score.Slice{"x&y": {N: 2, MeanScore: 0.5}, "z": {N: 1}}
			cr.FailureTags = map[string]int{"t": 3}
			cr.Verdict.Reasons = []string{"1 of 2 checks failed", "quote \" and newline \n"}
			rep.Candidates = append(rep.Candidates, cr)
			rep.Frontier = append(rep.Frontier, c)
		}
		rep.NotDistinguishable = notDistinguishable(rep.Frontier, sums)
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			t.Fatal(err)
		}
		if err := rep.WriteJSON(&got); err != nil {
			t.Fatalf("WriteJSON: %v", err)
		}
		if diff := cmp.Diff(want.String(), got.String()); diff != "" {
			t.Errorf("%d candidates: WriteJSON (-json.Encoder +WriteJSON):\n%s", n, diff)
		}
	}
}
