package governance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/store"
)

// SampleRequest is `assay review sample`.
type SampleRequest struct {
	Pack      *pack.Pack
	Candidate string
	N         int
	Seed      uint64
	Strategy  string
}

// latestRun is the candidate's most recently updated run against the pack.
func latestRun(ctx context.Context, st *store.Store, packSHA, candidate string) (store.RunRow, bool, error) {
	runs, err := st.Runs(ctx, packSHA)
	if err != nil {
		return store.RunRow{}, false, err
	}
	var best store.RunRow
	found := false
	for _, r := range runs {
		if r.Candidate == candidate && (!found || r.UpdatedAt.After(best.UpdatedAt)) {
			best, found = r, true
		}
	}
	return best, found, nil
}

// SampleQueue draws the sample from the scored turns of the candidate's
// latest run and queues it; turns queued before stay queued once. Turns
// that are unscored or missing have no score to review and are not drawn.
func SampleQueue(ctx context.Context, st *store.Store, req SampleRequest) ([]Candidate, error) {
	run, ok, err := latestRun(ctx, st, req.Pack.SHA256, req.Candidate)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("sample turns: candidate %q has no run against this pack: %w", req.Candidate, store.ErrNotFound)
	}
	done, err := st.TurnsDone(ctx, run.ID, run.Attempt)
	if err != nil {
		return nil, err
	}
	threshold := 1.0
	if req.Pack.Scoring.PassThreshold != nil {
		threshold = *req.Pack.Scoring.PassThreshold
	}
	var pool []Candidate
	for _, t := range done {
		if t.Status != store.TurnScored || t.TurnScore == nil {
			continue
		}
		pool = append(pool, Candidate{TurnID: t.ID, Candidate: run.Candidate, Label: t.Label, Scorer: t.ScorerID,
			TurnScore: *t.TurnScore, Passed: *t.TurnScore >= threshold})
	}
	picked, err := Sample(pool, req.N, req.Seed, req.Strategy)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	for _, c := range picked {
		_, err := st.DB().ExecContext(ctx, st.Rebind(`INSERT INTO company_eval_review_queue
			(turn_id, pack_sha256, candidate, strategy, seed, created_at) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (turn_id) DO NOTHING`), c.TurnID, req.Pack.SHA256, c.Candidate, req.Strategy, int64(req.Seed), now)
		if err != nil {
			return nil, fmt.Errorf("queue turn %d: %w", c.TurnID, err)
		}
	}
	if picked == nil {
		picked = []Candidate{}
	}
	return picked, nil
}

// OpenQueue lists the queued turns with no review yet, oldest first, each
// with its answer, checks and evidence (of one pack unless packSHA256 is
// empty).
func OpenQueue(ctx context.Context, st *store.Store, packSHA256 string) ([]StoredTurn, error) {
	q := `SELECT q.turn_id FROM company_eval_review_queue q
		WHERE NOT EXISTS (SELECT 1 FROM company_eval_reviews r WHERE r.turn_id = q.turn_id)`
	var args []any
	if packSHA256 != "" {
		q += ` AND q.pack_sha256 = ?`
		args = append(args, packSHA256)
	}
	rows, err := st.DB().QueryContext(ctx, st.Rebind(q+` ORDER BY q.id`), args...)
	if err != nil {
		return nil, fmt.Errorf("read review queue: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read review queue: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read review queue: %w", err)
	}
	out := []StoredTurn{}
	for _, id := range ids {
		t, err := Turn(ctx, st, id)
		if err != nil {
			return nil, err
		}
		out = append(out, WithAnswer(ctx, st, t))
	}
	return out, nil
}

// QueuedTurn reports whether turn id is in the review queue and, if so,
// the pack it was queued for and whether it has been reviewed since.
func QueuedTurn(ctx context.Context, st *store.Store, id int64) (packSHA256 string, reviewed, ok bool, err error) {
	err = st.DB().QueryRowContext(ctx, st.Rebind(`SELECT q.pack_sha256,
		EXISTS (SELECT 1 FROM company_eval_reviews r WHERE r.turn_id = q.turn_id)
		FROM company_eval_review_queue q WHERE q.turn_id = ?`), id).Scan(&packSHA256, &reviewed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, false, nil
	}
	if err != nil {
		return "", false, false, fmt.Errorf("read review queue of turn %d: %w", id, err)
	}
	return packSHA256, reviewed, true, nil
}
