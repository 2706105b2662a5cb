package report

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/verdict"
	"github.com/assay-eval/assay/host/verify"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func fp(v float64) *float64 { return &v }

// fixture is a verification of three candidates: a passes, b fails gates
// with a failed check, an unscored and a missing turn and a regression, and
// broken could not be read.
func fixture() (*verify.Report, *Collector) {
	rep := &verify.Report{Pack: verify.PackRef{Name: "Example | pack", Path: "packs/example.yaml", SHA256: strings.Repeat("ab", 32)},
		Frontier: []string{"candidate-a"},
		Errors:   []verify.CandidateError{{Candidate: "broken", Input: "runs/broken", Error: "reading run directory: no results"}}}
	col := NewCollector()
	check := func(name string, s float64) verify.CheckResult {
		return verify.CheckResult{Name: name, Source: "scorer:task_state", Score: s, Passed: s >= 1, Detail: name + " detail"}
	}
	outcomes := []struct {
		out *verify.Outcome
		sum score.Summary
		v   verdict.Verdict
		reg []string
	}{
		{&verify.Outcome{Candidate: "candidate-a", Results: []verify.TurnResult{
			{Label: "t1", Status: score.StatusScored, TurnScore: fp(1), LatencyS: fp(2.5), Checks: []verify.CheckResult{check("ok", 1)}},
			{Label: "t2", Status: score.StatusScored, TurnScore: fp(1), LatencyS: fp(1.5)},
			{Label: "t3", Status: score.StatusScored, TurnScore: fp(1)},
		}}, score.Summary{Candidate: "candidate-a", MeanScore: 1, FinalizeRate: 1, Gates: score.Gates{Passed: true, Failed: []score.GateFailure{}}}, verdict.Pass, nil},
		{&verify.Outcome{Candidate: "candidate-b", Results: []verify.TurnResult{
			{Label: "t1", Status: score.StatusScored, TurnScore: fp(.5), FailureTags: []string{"state_not_changed"},
				Checks: []verify.CheckResult{check("task_created", 0), check("ok", 1), check("priority|set", .5)}},
			{Label: "t2", Status: score.StatusUnscored, FailureTags: []string{"scorer_error"}, Diagnostics: []string{"scorer crashed"}},
			{Label: "t3", Status: score.StatusMissing},
		}}, score.Summary{Candidate: "candidate-b", MeanScore: .5, FinalizeRate: .5, ErrorRate: .5, Unscored: 1, Missing: 1,
			Gates: score.Gates{Failed: []score.GateFailure{{Gate: "min_mean_score", Value: .5, Threshold: .75}, {Gate: "unscored", Value: 1}}}},
			verdict.Fail, []string{"t1: turn score 0.500, baseline 1.000"}},
	}
	for _, o := range outcomes {
		cr := &verify.CandidateReport{Summary: o.sum}
		cr.Verdict.Verdict, cr.Verdict.Score, cr.Verdict.Regressions = o.v, o.sum.MeanScore, o.reg
		o.out.Summary = o.sum
		col.Add(o.out, cr)
		rep.Candidates = append(rep.Candidates, *cr)
	}
	return rep, col
}

// Independent of the writer's types: what a JUnit reader decodes.
type (
	xSuites struct {
		XMLName xml.Name `xml:"testsuites"`
		xCounts
		Suites []xSuite `xml:"testsuite"`
	}
	xSuite struct {
		Name string `xml:"name,attr"`
		xCounts
		Time  float64 `xml:"time,attr"`
		Cases []xCase `xml:"testcase"`
	}
	xCase struct {
		Classname string    `xml:"classname,attr"`
		Name      string    `xml:"name,attr"`
		Time      float64   `xml:"time,attr"`
		Failure   *xProblem `xml:"failure"`
		Error     *xProblem `xml:"error"`
		Skipped   *xProblem `xml:"skipped"`
	}
	xCounts struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
	}
	xProblem struct {
		Message string `xml:"message,attr"`
		Body    string `xml:",chardata"`
	}
)

// parseJUnit decodes JUnit XML strictly and checks that every count
// attribute equals the elements it counts.
func parseJUnit(t *testing.T, b []byte) xSuites {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	var doc xSuites
	if err := d.Decode(&doc); err != nil {
		t.Fatalf("JUnit XML does not parse: %v\n%s", err, b)
	}
	var total [4]int
	for _, s := range doc.Suites {
		var n [4]int
		for _, c := range s.Cases {
			if c.Classname == "" || c.Name == "" {
				t.Errorf("suite %s: testcase without classname or name: %+v", s.Name, c)
			}
			n[0]++
			for i, p := range []*xProblem{c.Failure, c.Error, c.Skipped} {
				if p != nil {
					n[i+1]++
				}
			}
		}
		if got := [4]int{s.Tests, s.Failures, s.Errors, s.Skipped}; got != n {
			t.Errorf("suite %s: tests/failures/errors/skipped attributes %v, elements %v", s.Name, got, n)
		}
		for i := range total {
			total[i] += n[i]
		}
	}
	if got := [4]int{doc.Tests, doc.Failures, doc.Errors, doc.Skipped}; got != total {
		t.Errorf("testsuites: attributes %v, elements %v", got, total)
	}
	return doc
}

// TestJUnitOneSuitePerCandidate (issue 20 item 1): a suite per candidate,
// a testcase per task then the gates; a failure for failed checks, an
// error for an unscored turn, skipped for a missing one, and the counts a
// strict reader finds.
func TestJUnitOneSuitePerCandidate(t *testing.T) {
	t.Parallel()
	rep, col := fixture()
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, rep, col); err != nil {
		t.Fatal(err)
	}
	doc := parseJUnit(t, buf.Bytes())
	type row struct{ Suite, Case, Kind, Message string }
	var got []row
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			r := row{Suite: s.Name, Case: c.Name, Kind: "pass"}
			switch {
			case c.Failure != nil:
				r.Kind, r.Message = "failure", c.Failure.Message
			case c.Error != nil:
				r.Kind, r.Message = "error", c.Error.Message
			case c.Skipped != nil:
				r.Kind, r.Message = "skipped", c.Skipped.Message
			}
			got = append(got, r)
		}
	}
	want := []row{
		{"candidate-a", "t1", "pass", ""}, {"candidate-a", "t2", "pass", ""}, {"candidate-a", "t3", "pass", ""},
		{"candidate-a", "gates", "pass", ""},
		{"candidate-b", "t1", "failure", "task_created, priority|set"},
		{"candidate-b", "t2", "error", "unscored: scorer_error"},
		{"candidate-b", "t3", "skipped", "missing: the run has no turn for this task"},
		{"candidate-b", "gates", "failure", "min_mean_score, unscored"},
		{"broken", "input", "error", "not verified: its input could not be read"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("testcases (-want +got):\n%s", diff)
	}
	if got, want := [4]int{doc.Tests, doc.Failures, doc.Errors, doc.Skipped}, [4]int{9, 2, 2, 1}; got != want {
		t.Errorf("totals = %v, want %v", got, want)
	}
	if doc.Suites[0].Time != 4 || doc.Suites[0].Cases[0].Time != 2.5 {
		t.Errorf("times: suite %v case %v, want 4 and 2.5 (latencies)", doc.Suites[0].Time, doc.Suites[0].Cases[0].Time)
	}
	if body := doc.Suites[1].Cases[0].Failure.Body; !strings.Contains(body, "task_created (scorer:task_state, score 0.000): task_created detail") {
		t.Errorf("failure body %q lacks the failed check's detail", body)
	}
	if body := doc.Suites[1].Cases[1].Error.Body; body != "scorer crashed" {
		t.Errorf("error body %q, want the turn's diagnostics", body)
	}
}

// TestJUnitEpochName: a turn of an epoch is its own testcase (epochs are
// not run yet; the name is ready for them).
func TestJUnitEpochName(t *testing.T) {
	t.Parallel()
	if got := caseName(Turn{Label: "t1", Epoch: 2}); got != "t1 [epoch 2]" {
		t.Errorf("caseName = %q", got)
	}
}

// TestMarkdownGolden (issue 20 item 2): the Markdown summary of the
// fixture, with and without the turns.
func TestMarkdownGolden(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		collect bool
	}{{"summary", true}, {"summary-no-turns", false}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep, col := fixture()
			if !tt.collect {
				col = nil
			}
			var buf bytes.Buffer
			if err := WriteMarkdown(&buf, rep, col); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", tt.name+".md"), buf.Bytes())
		})
	}
}

// TestMarkdownWorstTasksCapped: past ten, the rest are counted, not dropped silently.
func TestMarkdownWorstTasksCapped(t *testing.T) {
	t.Parallel()
	var results []verify.TurnResult
	for _, l := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		results = append(results, verify.TurnResult{Label: l, Status: score.StatusScored, TurnScore: fp(.5)})
	}
	col := NewCollector()
	col.Add(&verify.Outcome{Candidate: "c", Results: results}, nil)
	rep := &verify.Report{Candidates: []verify.CandidateReport{{Summary: score.Summary{Candidate: "c"}}}}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, rep, col); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "| j | scored | 0.500 |") || strings.Contains(out, "| k |") ||
		!strings.Contains(out, "2 more tasks below 1.000 or with failure tags are not shown") {
		t.Errorf("worst tasks not capped at ten with the rest counted:\n%s", out)
	}
}

// TestMarkdownScoredOnRetry: a candidate with turns scored only on a
// retry says how many, in the singular and the plural; one without none.
func TestMarkdownScoredOnRetry(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{
		0: "",
		1: "- 1 turn was scored only on a retry",
		3: "- 3 turns were scored only on a retry",
	} {
		rep := &verify.Report{Candidates: []verify.CandidateReport{{Summary: score.Summary{Candidate: "c"}, ScoredOnRetry: n}}}
		var buf bytes.Buffer
		if err := WriteMarkdown(&buf, rep, nil); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); (want == "") == strings.Contains(got, "scored only on a retry") || !strings.Contains(got, want) {
			t.Errorf("scored_on_retry %d: want %q in\n%s", n, want, got)
		}
		buf.Reset()
		if err := WriteJUnit(&buf, rep, NewCollector()); err != nil {
			t.Fatal(err)
		}
		prop := fmt.Sprintf(`<property name="scored_on_retry" value="%d">`, n)
		if got := buf.String(); strings.Contains(got, prop) != (n > 0) || (n == 0 && strings.Contains(got, "scored_on_retry")) {
			t.Errorf("scored_on_retry %d: JUnit property %q wanted %v in\n%s", n, prop, n > 0, got)
		}
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// TestCollectorNamesEpochs (issue 20 item 1): a candidate that ran a task
// several times gets one testcase per task and epoch; one that ran each
// task once keeps the bare labels.
func TestCollectorNamesEpochs(t *testing.T) {
	t.Parallel()
	col := NewCollector()
	col.Add(&verify.Outcome{Candidate: "many", Results: []verify.TurnResult{
		{Label: "t1", Epoch: 1}, {Label: "t1", Epoch: 2}}}, nil)
	col.Add(&verify.Outcome{Candidate: "once", Results: []verify.TurnResult{{Label: "t1", Epoch: 1}}}, nil)
	var got []string
	for _, id := range []string{"many", "once"} {
		for _, tr := range col.turns(id) {
			got = append(got, caseName(tr))
		}
	}
	if diff := cmp.Diff([]string{"t1 [epoch 1]", "t1 [epoch 2]", "t1"}, got); diff != "" {
		t.Errorf("testcase names (-want +got):\n%s", diff)
	}
}
