package verify

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/store"
)

// CompareSide is one of the two runs compared.
type CompareSide struct {
	Ref           string        `json:"ref"` // as given: a candidate ID or a run ID
	Candidate     string        `json:"candidate"`
	RunID         int64         `json:"run_id"`
	ScorerVersion string        `json:"scorer_version"`
	Summary       score.Summary `json:"summary"`
	Verdict       string        `json:"verdict"`
}

// CompareTask is one task of the per-task table.
type CompareTask struct {
	Label string   `json:"label"`
	A     *float64 `json:"a"` // turn score; null when unscored or missing
	B     *float64 `json:"b"`
	// Delta is B minus A; 0 when either is null.
	Delta float64 `json:"delta"`
	// ChangedChecks names ("source/name") the checks whose result differs.
	ChangedChecks []string `json:"changed_checks"`
}

// Comparison is `assay compare`: two runs of one pack side by side.
type Comparison struct {
	Pack  PackRef       `json:"pack"`
	A     CompareSide   `json:"a"`
	B     CompareSide   `json:"b"`
	Tasks []CompareTask `json:"tasks"` // by label
	// Better and Worse are the tasks whose turn score rose or fell from A
	// to B, largest change first.
	Better []CompareTask `json:"better"`
	Worse  []CompareTask `json:"worse"`
	// Drift lists the drift units that differ between the two runs.
	Drift []Drift `json:"drift"`
}

// Compare compares two recorded runs of pack: a and b are candidate IDs
// (their most recent run of the pack) or run IDs.
func Compare(ctx context.Context, st *store.Store, pack PackRef, a, b string) (*Comparison, error) {
	if st == nil {
		return nil, errors.New("compare: a database is required")
	}
	runs, err := st.Runs(ctx, pack.SHA256)
	if err != nil {
		return nil, err
	}
	ra, err := resolveRun(runs, a)
	if err != nil {
		return nil, err
	}
	rb, err := resolveRun(runs, b)
	if err != nil {
		return nil, err
	}
	cmp := &Comparison{Pack: pack, Tasks: []CompareTask{}, Better: []CompareTask{}, Worse: []CompareTask{},
		Drift: nonNil(DriftBetween(RunUnits(ra), RunUnits(rb)))}
	var results [2][]TurnResult
	for i, side := range []struct {
		ref string
		r   store.RunRow
		out *CompareSide
	}{{a, ra, &cmp.A}, {b, rb, &cmp.B}} {
		if results[i], err = runResults(ctx, st, side.r); err != nil {
			return nil, err
		}
		sum, v := storedSummary(side.r.Summary, side.r.Verdict)
		*side.out = CompareSide{Ref: side.ref, Candidate: side.r.Candidate, RunID: side.r.ID,
			ScorerVersion: side.r.ScorerVersion, Summary: sum, Verdict: string(v.Verdict)}
	}
	for _, d := range diffTurns(results[0], results[1]) {
		t := CompareTask{Label: d.Label, A: d.Old, B: d.New, Delta: d.delta(), ChangedChecks: d.ChangedChecks}
		cmp.Tasks = append(cmp.Tasks, t)
		switch {
		case t.Delta > 0:
			cmp.Better = append(cmp.Better, t)
		case t.Delta < 0:
			cmp.Worse = append(cmp.Worse, t)
		}
	}
	sort.SliceStable(cmp.Better, func(i, j int) bool { return cmp.Better[i].Delta > cmp.Better[j].Delta })
	sort.SliceStable(cmp.Worse, func(i, j int) bool { return cmp.Worse[i].Delta < cmp.Worse[j].Delta })
	return cmp, nil
}

// resolveRun finds ref among a pack's runs: the most recently updated run
// of a candidate with that ID, else the run with that ID.
func resolveRun(runs []store.RunRow, ref string) (store.RunRow, error) {
	var latest store.RunRow
	for _, r := range runs {
		if r.Candidate == ref && (latest.ID == 0 || r.UpdatedAt.After(latest.UpdatedAt)) {
			latest = r
		}
	}
	if latest.ID != 0 {
		return latest, nil
	}
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		for _, r := range runs {
			if r.ID == id {
				return r, nil
			}
		}
	}
	return store.RunRow{}, &InputError{Err: fmt.Errorf("%q is neither a candidate nor a run ID recorded for this pack", ref)}
}
