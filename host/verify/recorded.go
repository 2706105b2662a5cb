package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/assay-eval/assay/host/store"
)

// ErrNotRecorded means no run of that candidate was recorded for the pack
// and scorer version.
var ErrNotRecorded = errors.New("no recorded run")

// Recorded returns the turn results recorded for candidate's latest attempt
// against the pack (by sha256) with the same scorer version.
func Recorded(ctx context.Context, st *store.Store, candidate, packSHA, scorerVersion string) ([]TurnResult, error) {
	_, out, err := recordedRun(ctx, st, candidate, packSHA, scorerVersion)
	return out, err
}

// recordedRun is Recorded with the run the results are from.
func recordedRun(ctx context.Context, st *store.Store, candidate, packSHA, scorerVersion string) (store.RunRow, []TurnResult, error) {
	if st == nil {
		return store.RunRow{}, nil, ErrNotRecorded
	}
	runs, err := st.Runs(ctx, packSHA)
	if err != nil {
		return store.RunRow{}, nil, err
	}
	for _, r := range runs {
		if r.Candidate != candidate || r.ScorerVersion != scorerVersion {
			continue
		}
		out, err := runResults(ctx, st, r)
		return r, out, err
	}
	return store.RunRow{}, nil, fmt.Errorf("%w of candidate %q for this pack and scorer version", ErrNotRecorded, candidate)
}

// runResults are the latest turn results of a run's latest attempt, by label.
func runResults(ctx context.Context, st *store.Store, r store.RunRow) ([]TurnResult, error) {
	rows, err := st.TurnsDone(ctx, r.ID, r.Attempt)
	if err != nil {
		return nil, err
	}
	return rowResults(rows)
}

// rowResults is runResults of the run's turn rows read.
func rowResults(rows map[store.TurnKey]store.TurnRow) ([]TurnResult, error) {
	out := make([]TurnResult, 0, len(rows))
	for _, row := range rows {
		var tr TurnResult
		if err := json.Unmarshal(row.Result, &tr); err != nil {
			return nil, fmt.Errorf("reading recorded turn %s: %w", row.Label, err)
		}
		tr.Epoch = max(row.Epoch, 1)
		out = append(out, tr)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Label < out[j].Label || (out[i].Label == out[j].Label && out[i].Epoch < out[j].Epoch)
	})
	return out, nil
}
