package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/verify"
)

// The JUnit XML layout (docs/ci.md): one testsuite per candidate, one
// testcase per task (and epoch, once tasks run in epochs), then one
// testcase for the gates.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Properties []junitProperty `xml:"properties>property,omitempty"`
		Cases      []junitCase     `xml:"testcase"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Classname string        `xml:"classname,attr"`
		Name      string        `xml:"name,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitProblem `xml:"failure,omitempty"`
		Error     *junitProblem `xml:"error,omitempty"`
		Skipped   *junitProblem `xml:"skipped,omitempty"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Body    string `xml:",chardata"`
	}
)

// gatesCase is the name of each suite's final testcase, the gates.
const gatesCase = "gates"

// WriteJUnit writes rep as JUnit XML, with each turn's failed checks from
// col (a candidate col does not hold has only its gates testcase).
func WriteJUnit(w io.Writer, rep *verify.Report, col *Collector) error {
	doc := junitSuites{Name: "assay verify " + rep.Pack.Name}
	for i := range rep.Candidates {
		doc.add(candidateSuite(rep.Pack.Name, &rep.Candidates[i], col.turns(rep.Candidates[i].Candidate)))
	}
	for _, e := range rep.Errors {
		doc.add(junitSuite{Name: e.Candidate, Cases: []junitCase{{Classname: rep.Pack.Name, Name: "input", Time: "0",
			Error: &junitProblem{Message: "not verified: its input could not be read", Type: "input", Body: e.Input + ": " + e.Error}}}})
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	return nil
}

// add appends a suite with its counts and adds them to the totals.
func (d *junitSuites) add(s junitSuite) {
	s.Tests = len(s.Cases)
	for _, c := range s.Cases {
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Error != nil:
			s.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	if s.Time == "" {
		s.Time = "0"
	}
	d.Tests, d.Failures, d.Errors, d.Skipped = d.Tests+s.Tests, d.Failures+s.Failures, d.Errors+s.Errors, d.Skipped+s.Skipped
	d.Suites = append(d.Suites, s)
}

// candidateSuite is one candidate's testsuite: a testcase per turn, then
// the gates.
func candidateSuite(pack string, c *verify.CandidateReport, turns []Turn) junitSuite {
	s := junitSuite{Name: c.Candidate, Properties: []junitProperty{
		{Name: "verdict", Value: string(c.Verdict.Verdict)},
		{Name: "mean_score", Value: fmt.Sprint(c.MeanScore)},
		{Name: "scorer_version", Value: c.ScorerVersion},
	}}
	if c.ScoredOnRetry > 0 { // turns a retry scored after a lost batch or a failed first try
		s.Properties = append(s.Properties, junitProperty{Name: "scored_on_retry", Value: fmt.Sprint(c.ScoredOnRetry)})
	}
	var total float64
	for _, t := range turns {
		tc := junitCase{Classname: pack, Name: caseName(t), Time: seconds(t.LatencyS)}
		if t.LatencyS != nil {
			total += *t.LatencyS
		}
		switch {
		case t.Status == score.StatusMissing:
			tc.Skipped = &junitProblem{Message: "missing: the run has no turn for this task"}
		case t.Status == score.StatusUnscored:
			tc.Error = &junitProblem{Message: "unscored: " + strings.Join(t.FailedTags, ", "), Type: "unscored",
				Body: strings.Join(t.Diagnostics, "\n")}
		case len(t.Failed) > 0:
			names, details := make([]string, len(t.Failed)), make([]string, len(t.Failed))
			for i, ch := range t.Failed {
				names[i] = ch.Name
				details[i] = fmt.Sprintf("%s (%s, score %.3f): %s", ch.Name, ch.Source, ch.Score, ch.Detail)
			}
			tc.Failure = &junitProblem{Message: strings.Join(names, ", "), Type: "checks", Body: strings.Join(details, "\n")}
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Time = fmt.Sprintf("%.3f", total)
	gates := junitCase{Classname: pack, Name: gatesCase, Time: "0"}
	if !c.Gates.Passed {
		names, details := make([]string, len(c.Gates.Failed)), make([]string, len(c.Gates.Failed))
		for i, g := range c.Gates.Failed {
			names[i] = g.Gate
			details[i] = fmt.Sprintf("gate %s failed: %v against threshold %v", g.Gate, g.Value, g.Threshold)
		}
		gates.Failure = &junitProblem{Message: strings.Join(names, ", "), Type: "gate", Body: strings.Join(details, "\n")}
	}
	s.Cases = append(s.Cases, gates)
	return s
}

// caseName names a turn's testcase: its task label, with the epoch once
// tasks run in epochs.
func caseName(t Turn) string {
	if t.Epoch > 0 {
		return fmt.Sprintf("%s [epoch %d]", t.Label, t.Epoch)
	}
	return t.Label
}

func seconds(p *float64) string {
	if p == nil {
		return "0"
	}
	return fmt.Sprintf("%.3f", *p)
}
