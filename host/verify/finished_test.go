package verify

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/verdict"
	"github.com/assay-eval/assay/pkg/scorer"
)

// fullCandidate is a candidate report with every field set.
func fullCandidate(name string) CandidateReport {
	lat, cost, total := 2.5, 0.01, 7
	return CandidateReport{
		Summary: score.Summary{Candidate: name, N: 3, MeanScore: 0.9125000000000152, FinalizeRate: 1, ErrorRate: 1.0 / 3,
			MeanLatencyS: &lat, MeanToolCalls: 1.5, MeanCostUSD: &cost, Unscored: 1, Missing: 2,
			Slices:        map[string]score.Slice{"ops": {N: 2, MeanScore: 0.5}},
			FailureTags:   map[string]int{"finalize_missing": 1},
			ScorerVersion: "59767e7a", Eligible: false, Epochs: 2, EpochsMin: 1,
			Gates: score.Gates{Failed: []score.GateFailure{{Gate: score.GateMissing, Value: 2}},
				Notes: []string{"gate min_pass_hat_k failed unevaluated"}},
			MeanScoreCI95: []float64{0.1, math.Nextafter(1, 0)}, PassAtK: map[string]float64{"1": 0.5},
			PassHatK: map[string]float64{"1": 0.25}, FlakyTasks: []string{"t1"}},
		RunID: 12, Reused: 1, Rescored: 1, RescoredLabels: []string{"t2"}, Retried: 1, RetriedLabels: []string{"t3"},
		Ignored: 1, IgnoredLabels: []string{"x.2"},
		Paired: &score.Paired{Baseline: "base", Tasks: 3, MeanDelta: -0.1, CI95: []float64{-0.2, 0}, MinDelta: 0.05},
		Verdict: RunVerdict{Evaluation: verdict.Evaluation{TaskID: name, Verdict: "FAIL", Score: 0.5, Confidence: 0.66,
			Metrics: map[string]float64{"correctness": 1}, Tests: &verdict.Tests{Passed: 2, Failed: 1, Total: &total},
			Regressions: []string{"t1: turn score 0.100, baseline 0.900"}, Recommendations: []string{"Fix it."},
			Artifact: &verdict.ArtifactResult{Kind: "raw", Valid: true, Score: 1, Issues: []string{}}},
			Reasons: []string{"gate missing failed"}},
		Drift: []Drift{{Unit: "scorer:s", From: "a", To: "b"}},
	}
}

// TestFinishedCandidates: the candidates a run keeps until it ends come
// back as they were added, field for field (nil and empty apart), whether
// kept encoded or, when their encoding does not read back equal, whole.
func TestFinishedCandidates(t *testing.T) {
	t.Parallel()
	empty := CandidateReport{Summary: score.Summary{Candidate: "e"}}
	lists := CandidateReport{Summary: score.Summary{Candidate: "l", Slices: map[string]score.Slice{}, FailureTags: map[string]int{},
		Gates: score.Gates{Failed: []score.GateFailure{}}, FlakyTasks: []string{}}, RescoredLabels: []string{}, RetriedLabels: []string{},
		IgnoredLabels: []string{}, Verdict: RunVerdict{Reasons: []string{}}}
	notUTF8 := fullCandidate("c\xff")
	omitted := fullCandidate("d")
	omitted.Drift = []Drift{} // omitempty: reads back nil
	nan := fullCandidate("n")
	nan.MeanScore = math.NaN() // JSON cannot hold it
	tests := map[string]struct {
		in      []CandidateReport
		encoded []bool
	}{
		"none":            {},
		"full":            {in: []CandidateReport{fullCandidate("a"), fullCandidate("b")}, encoded: []bool{true, true}},
		"nil and empty":   {in: []CandidateReport{empty, lists}, encoded: []bool{true, true}},
		"not UTF-8":       {in: []CandidateReport{fullCandidate("a"), notUTF8}, encoded: []bool{true, false}},
		"omitted empty":   {in: []CandidateReport{omitted}, encoded: []bool{false}},
		"not JSON":        {in: []CandidateReport{nan, fullCandidate("b")}, encoded: []bool{false, true}},
		"zero and -0 etc": {in: []CandidateReport{{Summary: score.Summary{MeanScore: math.Copysign(0, -1), ErrorRate: 5e-324}}}, encoded: []bool{true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var f finished
			for i := range tc.in {
				c := tc.in[i] // add keeps no reference to what it is given when it encodes
				f.add(&c)
			}
			var encoded []bool
			for _, it := range f.items {
				encoded = append(encoded, it.enc != nil)
			}
			if diff := cmp.Diff(tc.encoded, encoded); diff != "" {
				t.Errorf("kept encoded (-want +got):\n%s", diff)
			}
			got, err := f.reports()
			if err != nil {
				t.Fatal(err)
			}
			want := tc.in
			if want == nil {
				want = []CandidateReport{}
			}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool {
				return math.Float64bits(a) == math.Float64bits(b)
			})); diff != "" {
				t.Errorf("reports() (-want +got):\n%s", diff)
			}
		})
	}
}

// BenchmarkFinishedCandidate is what keeping one verified candidate costs.
func BenchmarkFinishedCandidate(b *testing.B) {
	c := fullCandidate("c0001")
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := encodeCandidate(&c); !ok {
			b.Fatal("not encoded")
		}
	}
}

// TestRunReturnsCandidatesAsBuilt: the report Run returns holds each
// candidate's report as it was built and handed to OnCandidate, and its
// summary.json is what the reports as built encode to (a line that is not
// UTF-8 is refused before, so TestFinishedCandidates covers that case).
func TestRunReturnsCandidatesAsBuilt(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	names := []string{"c1", "c2", "c3"}
	for _, c := range names {
		for k := range 5 {
			b.WriteString(turnLine(c, fmt.Sprintf("t%d", k), 0) + "\n")
		}
	}
	path := filepath.Join(t.TempDir(), "turns.jsonl")
	writeFile(t, path, b.String())
	p := onePack([3]string{"t0", "s", "k"}, [3]string{"t1", "s", "k"}, [3]string{"t2", "s", "k"}, [3]string{"t3", "s", "k"}, [3]string{"t4", "s", "k"})
	var built []CandidateReport
	rep, err := Run(context.Background(), Request{
		Engine:      Config{Pack: p, Scorers: constScorer{}, Descriptions: map[scorer.ID]scorer.Description{"s": {ID: "s"}}},
		TurnsFile:   path,
		OnCandidate: func(_ *Outcome, c *CandidateReport) { built = append(built, *c) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != len(names) {
		t.Fatalf("OnCandidate was called %d times, want %d", len(built), len(names))
	}
	if diff := cmp.Diff(built, rep.Candidates); diff != "" {
		t.Errorf("Run's candidates (-as built +returned):\n%s", diff)
	}
	var got, want bytes.Buffer
	if err := rep.WriteJSON(&got); err != nil {
		t.Fatal(err)
	}
	asBuilt := *rep
	asBuilt.Candidates = built
	if err := asBuilt.WriteJSON(&want); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("summary.json of Run's report differs from the reports as built:\n%s\nwant\n%s", got.String(), want.String())
	}
}
