package cockpit

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"

	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
)

// Page sizes, in turns.
const (
	turnsPerPage = 50
	compareLimit = 5000
	histBins     = 10
)

// latestRuns keeps each candidate's newest run (the highest id) of rows
// ordered by candidate and id.
func latestRuns(rows []store.RunRow) []store.RunRow {
	var out []store.RunRow
	for _, r := range rows {
		if n := len(out); n > 0 && out[n-1].Candidate == r.Candidate {
			out[n-1] = r
			continue
		}
		out = append(out, r)
	}
	return out
}

// packOverview is a pack's candidates with their latest gates, verdicts,
// mean scores and the Pareto frontier, and its banners.
func packOverview(ctx context.Context, st *store.Store, name, sha string, pareto bool) (packView, []store.RunRow, error) {
	all, err := st.RunSummaries(ctx, sha)
	if err != nil {
		return packView{}, nil, err
	}
	runs := latestRuns(all)
	pv := packView{Name: name, SHA256: sha}
	var sums []score.Summary
	for _, r := range runs {
		cv := candidateView{RunID: r.ID, Candidate: r.Candidate, Status: r.Status, Verdict: "–", Updated: r.UpdatedAt.Format("2006-01-02 15:04")}
		if r.Summary != nil && json.Unmarshal(r.Summary, &cv.summary) == nil {
			cv.MeanScore, cv.GatesPassed = cv.summary.MeanScore, cv.summary.Gates.Passed
			for _, g := range cv.summary.Gates.Failed {
				cv.FailedGates = append(cv.FailedGates, g.Gate)
			}
			sums = append(sums, cv.summary)
			if cv.summary.Unscored > 0 {
				pv.Banners = append(pv.Banners, fmt.Sprintf("Suspect scorer: candidate %s has %d unscored turns (a scorer could not score them).", r.Candidate, cv.summary.Unscored))
			}
		}
		var v verify.RunVerdict
		if r.Verdict != nil && json.Unmarshal(r.Verdict, &v) == nil {
			cv.Verdict = string(v.Verdict)
		}
		pv.Candidates = append(pv.Candidates, cv)
	}
	pv.Frontier = verify.Frontier(pareto, sums)
	on := map[string]bool{}
	for _, c := range pv.Frontier {
		on[c] = true
	}
	for i := range pv.Candidates {
		pv.Candidates[i].Frontier = on[pv.Candidates[i].Candidate]
	}
	return pv, runs, nil
}

// runPage is a run's summary, histogram and one page of its tasks (after
// f.After); perPage 0 reads every task (the HTML report).
func runPage(ctx context.Context, st *store.Store, hist *histCache, r store.RunRow, f store.TurnFilter, perPage int) (runView, error) {
	rv := runView{RunID: r.ID, Candidate: r.Candidate, Attempt: r.Attempt, Pack: r.PackName, Filter: f,
		Statuses: []string{store.TurnScored, store.TurnUnscored, store.TurnMissing}, Verdict: "–"}
	if r.Summary != nil {
		if err := json.Unmarshal(r.Summary, &rv.Summary); err != nil {
			return rv, fmt.Errorf("reading the summary of run %d: %w", r.ID, err)
		}
	}
	var v verify.RunVerdict
	if r.Verdict != nil && json.Unmarshal(r.Verdict, &v) == nil {
		rv.Verdict = string(v.Verdict)
	}
	bins, err := hist.get(ctx, st, r)
	if err != nil {
		return rv, err
	}
	rv.Histogram = histogramSVG(bins)
	limit := perPage + 1
	if perPage == 0 {
		limit = math.MaxInt32
	}
	rows, err := st.TurnPage(ctx, r.ID, f, limit)
	if err != nil {
		return rv, err
	}
	if perPage > 0 && len(rows) > perPage {
		rows = rows[:perPage]
		rv.Next = pageLink(f, rows[len(rows)-1].Label)
	}
	if f.After != "" {
		rv.First = pageLink(f, "")
	}
	rv.Turns, err = turnResults(rows)
	return rv, err
}

// pageLink is the query of the run page under filter f after a label.
func pageLink(f store.TurnFilter, after string) string {
	v := url.Values{"label": {f.Label}, "status": {f.Status}}
	if after != "" {
		v.Set("after", after)
	}
	return "?" + v.Encode()
}

// turnResults decodes stored turns' results.json objects.
func turnResults(rows []store.TurnRow) ([]verify.TurnResult, error) {
	out := make([]verify.TurnResult, len(rows))
	for i, t := range rows {
		if err := json.Unmarshal(t.Result, &out[i]); err != nil {
			return nil, fmt.Errorf("reading turn %s of run %d: %w", t.Label, t.RunID, err)
		}
	}
	return out, nil
}

// compareRuns compares two runs task by task.
func compareRuns(ctx context.Context, st *store.Store, pack string, a, b store.RunRow) (compareView, error) {
	cv := compareView{Pack: pack, A: a.Candidate, B: b.Candidate}
	ta, err := st.TurnPage(ctx, a.ID, store.TurnFilter{}, compareLimit+1)
	if err != nil {
		return cv, err
	}
	tb, err := st.TurnPage(ctx, b.ID, store.TurnFilter{}, compareLimit+1)
	if err != nil {
		return cv, err
	}
	if len(ta) > compareLimit || len(tb) > compareLimit {
		ta, tb = ta[:min(len(ta), compareLimit)], tb[:min(len(tb), compareLimit)]
		cv.Note = fmt.Sprintf("only the first %d tasks (by label) of each candidate are compared", compareLimit)
	}
	cv.Rows, cv.MeanDelta = compareTasks(ta, tb)
	return cv, nil
}

// candidatesOf lists the candidates of runs, sorted.
func candidatesOf(runs []store.RunRow) []string {
	out := make([]string, 0, len(runs))
	for _, r := range runs {
		out = append(out, r.Candidate)
	}
	sort.Strings(out)
	return out
}
