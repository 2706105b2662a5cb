package report

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/verify"
)

// worstTasks is how many of a candidate's worst tasks the Markdown lists.
const worstTasks = 10

// WriteMarkdown writes rep as GitHub-flavoured Markdown for a job summary
// ($GITHUB_STEP_SUMMARY) or a pull-request comment (docs/ci.md): each
// candidate's verdict, gates and mean score, the frontier, the candidates
// not verified, the scorers that could not run, and for each candidate its
// regressions against the baseline and its worst tasks from col.
func WriteMarkdown(w io.Writer, rep *verify.Report, col *Collector) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "## assay verify: %s\n\n", cell(rep.Pack.Name))
	fmt.Fprintf(b, "Pack `%s` (sha256 `%s`).\n\n", rep.Pack.Path, short(rep.Pack.SHA256))
	if len(rep.Candidates) > 0 {
		fmt.Fprintln(b, "| candidate | verdict | gates | mean score | finalize rate | error rate | unscored | missing |")
		fmt.Fprintln(b, "|---|---|---|---:|---:|---:|---:|---:|")
		for _, c := range rep.Candidates {
			gates := "passed"
			if !c.Gates.Passed {
				gates = fmt.Sprintf("%d failed", len(c.Gates.Failed))
			}
			fmt.Fprintf(b, "| %s | %s | %s | %.3f | %.3f | %.3f | %d | %d |\n", cell(c.Candidate), c.Verdict.Verdict, gates,
				c.MeanScore, c.FinalizeRate, c.ErrorRate, c.Unscored, c.Missing)
		}
		fmt.Fprintln(b)
	}
	if len(rep.Frontier) == 0 {
		fmt.Fprint(b, "**Pareto frontier:** none (no candidate passed every gate)\n\n")
	} else {
		fmt.Fprintf(b, "**Pareto frontier:** %s\n\n", cell(strings.Join(rep.Frontier, ", ")))
	}
	if len(rep.Errors) > 0 {
		fmt.Fprint(b, "**Not verified** (their input could not be read):\n\n")
		for _, e := range rep.Errors {
			fmt.Fprintf(b, "- %s (`%s`): %s\n", cell(e.Candidate), e.Input, cell(e.Error))
		}
		fmt.Fprintln(b)
	}
	if len(rep.ScorerFailures) > 0 {
		fmt.Fprint(b, "**Scorers that could not run** (these results say nothing about the candidate):\n\n")
		for _, f := range rep.ScorerFailures {
			fmt.Fprintf(b, "- %s\n", cell(f.String()))
		}
		fmt.Fprintln(b)
	}
	for i := range rep.Candidates {
		writeCandidate(b, &rep.Candidates[i], col.turns(rep.Candidates[i].Candidate), col != nil)
	}
	if err := b.Flush(); err != nil {
		return fmt.Errorf("writing Markdown: %w", err)
	}
	return nil
}

// writeCandidate writes one candidate's section: failed gates, the
// verdict's reasons (regressions among them) and its worst tasks.
func writeCandidate(b *bufio.Writer, c *verify.CandidateReport, turns []Turn, collected bool) {
	fmt.Fprintf(b, "### %s: %s\n\n", cell(c.Candidate), c.Verdict.Verdict)
	fmt.Fprintf(b, "Mean score %.3f (verdict score %.3f, confidence %.3f).\n\n", c.MeanScore, c.Verdict.Score, c.Verdict.Confidence)
	for _, g := range c.Gates.Failed {
		fmt.Fprintf(b, "- gate `%s` failed: %.3f against threshold %.3f\n", g.Gate, g.Value, g.Threshold)
	}
	if len(c.Verdict.Regressions) > 0 {
		n := len(c.Verdict.Regressions)
		noun := "regressions"
		if n == 1 {
			noun = "regression"
		}
		fmt.Fprintf(b, "- %d %s against the baseline:\n", n, noun)
		for _, r := range c.Verdict.Regressions {
			fmt.Fprintf(b, "  - %s\n", cell(r))
		}
	}
	if c.ScoredOnRetry > 0 {
		turns := "turns were"
		if c.ScoredOnRetry == 1 {
			turns = "turn was"
		}
		fmt.Fprintf(b, "- %d %s scored only on a retry (the batch lost its plugin process, or the scorer failed the turn once): `scored_on_retry_labels` in summary.json\n", c.ScoredOnRetry, turns)
	}
	if len(c.Gates.Failed) > 0 || len(c.Verdict.Regressions) > 0 || c.ScoredOnRetry > 0 {
		fmt.Fprintln(b)
	}
	if !collected {
		return
	}
	worst := worst(turns)
	if len(worst) == 0 {
		fmt.Fprint(b, "Every task scored 1.000 with no failure tag.\n\n")
		return
	}
	shown := worst[:min(worstTasks, len(worst))]
	fmt.Fprintln(b, "| task | status | turn score | failure tags |")
	fmt.Fprintln(b, "|---|---|---:|---|")
	for _, t := range shown {
		score := "-"
		if t.TurnScore != nil {
			score = fmt.Sprintf("%.3f", *t.TurnScore)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", cell(caseName(t)), t.Status, score, cell(strings.Join(t.FailedTags, ", ")))
	}
	if n := len(worst) - len(shown); n > 0 {
		fmt.Fprintf(b, "\n%d more tasks below 1.000 or with failure tags are not shown (the %d worst are).\n", n, worstTasks)
	}
	fmt.Fprintln(b)
}

// worst lists the turns that are not a clean pass (missing, unscored, a
// turn score below 1 or a failure tag), worst first: missing, then
// unscored, then by turn score; ties by label.
func worst(turns []Turn) []Turn {
	var out []Turn
	for _, t := range turns {
		if t.Status == score.StatusScored && t.TurnScore != nil && *t.TurnScore >= 1 && len(t.FailedTags) == 0 {
			continue
		}
		out = append(out, t)
	}
	rank := func(t Turn) float64 {
		switch {
		case t.Status == score.StatusMissing:
			return -2
		case t.TurnScore == nil:
			return -1
		}
		return *t.TurnScore
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := rank(out[i]), rank(out[j])
		if ri != rj {
			return ri < rj
		}
		return caseName(out[i]) < caseName(out[j])
	})
	return out
}

// cell makes s safe inside a Markdown table cell or list item: no pipes
// breaking the row, no newlines.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ").Replace(s)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
