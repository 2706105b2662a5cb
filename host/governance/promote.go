package governance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/store"
)

// PromoteRequest is `assay promote`: a person asking to promote a
// candidate. There is no way to skip an interlock.
type PromoteRequest struct {
	Pack       *pack.Pack
	Candidate  string
	Baseline   string
	ApprovedBy string
	Reason     string
}

// Promotion is a promotion record (item 5's promotions list).
type Promotion struct {
	ID            int64                `json:"id"`
	PackSHA256    string               `json:"pack_sha256"`
	Candidate     string               `json:"candidate"`
	Baseline      string               `json:"baseline"`
	ApprovedBy    string               `json:"approved_by"`
	Reason        string               `json:"reason"`
	CreatedAt     time.Time            `json:"created_at"`
	Runs          []int64              `json:"runs"`
	ScorerVersion string               `json:"scorer_version"`
	Interlocks    map[string]Interlock `json:"interlocks"`
	RollbackOn    []string             `json:"rollback_on"`
}

// RefusedError is a promotion refused because interlocks are red.
type RefusedError struct {
	Red        []string
	Interlocks map[string]Interlock
}

func (e *RefusedError) Error() string {
	return "promotion refused: " + strings.Join(e.Red, "; ")
}

// ErrNoApprover: a promotion names no person approving it.
var ErrNoApprover = errors.New("the approver is blank (--approved-by)")

// Promote writes a promotion record when every interlock is green, and
// otherwise returns a *RefusedError naming each red one.
func Promote(ctx context.Context, st *store.Store, req PromoteRequest) (Promotion, error) {
	if strings.TrimSpace(req.ApprovedBy) == "" {
		return Promotion{}, ErrNoApprover
	}
	sha := req.Pack.SHA256
	hist, err := History(ctx, st, sha, req.Candidate)
	if err != nil {
		return Promotion{}, err
	}
	in := PromotionInput{Promotion: req.Pack.Scoring.Promotion, History: hist, Baseline: req.Baseline}
	if req.Baseline != "" {
		if in.BaselineHistory, err = History(ctx, st, sha, req.Baseline); err != nil {
			return Promotion{}, err
		}
	}
	if in.Fired, err = Fired(ctx, st, sha); err != nil {
		return Promotion{}, err
	}
	latest, hasRun := last(hist)
	if in.Scorers, _, err = Scorers(ctx, st, sha, PackThresholds(req.Pack), latest.Units); err != nil {
		return Promotion{}, err
	}
	ls := Interlocks(in)
	if red := Red(ls); len(red) > 0 || !hasRun {
		return Promotion{}, &RefusedError{Red: red, Interlocks: ls}
	}
	pr := Promotion{PackSHA256: sha, Candidate: req.Candidate, Baseline: req.Baseline, ApprovedBy: req.ApprovedBy,
		Reason: req.Reason, CreatedAt: time.Now().UTC(), Runs: shadowRunIDs(hist, latest, req.Pack.Scoring.Promotion.ShadowRuns),
		ScorerVersion: latest.Units.ScorerVersion, Interlocks: ls, RollbackOn: append([]string{}, req.Pack.Scoring.Promotion.RollbackOn...)}
	runs, _ := json.Marshal(pr.Runs)
	locks, _ := json.Marshal(pr.Interlocks)
	rollback, _ := json.Marshal(pr.RollbackOn)
	err = st.DB().QueryRowContext(ctx, st.Rebind(`INSERT INTO company_eval_promotions
		(pack_sha256, candidate, baseline, approved_by, reason, runs, scorer_version, interlocks, rollback_on, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		sha, pr.Candidate, pr.Baseline, pr.ApprovedBy, pr.Reason, string(runs), pr.ScorerVersion, string(locks), string(rollback), pr.CreatedAt).Scan(&pr.ID)
	if err != nil {
		return Promotion{}, fmt.Errorf("record promotion of %s: %w", req.Candidate, err)
	}
	return pr, nil
}

// shadowRunIDs are the runs a promotion rests on: the latest run and the
// shadow runs with its drift units, newest first, each run once.
func shadowRunIDs(h []Entry, latest Entry, n int) []int64 {
	out := []int64{latest.RunID}
	seen := map[int64]bool{latest.RunID: true}
	for i := len(h) - 1; i >= 0 && len(out) < max(n, 1); i-- {
		if !seen[h[i].RunID] && sameUnits(h[i], latest) {
			out = append(out, h[i].RunID)
			seen[h[i].RunID] = true
		}
	}
	return out
}

// Promotions lists the promotion records, oldest first (of one pack unless
// packSHA256 is empty).
func Promotions(ctx context.Context, st *store.Store, packSHA256 string) ([]Promotion, error) {
	q := `SELECT id, pack_sha256, candidate, baseline, approved_by, reason, runs, scorer_version, interlocks, rollback_on, created_at
		FROM company_eval_promotions`
	var args []any
	if packSHA256 != "" {
		q += ` WHERE pack_sha256 = ?`
		args = append(args, packSHA256)
	}
	rows, err := st.DB().QueryContext(ctx, st.Rebind(q+` ORDER BY id`), args...)
	if err != nil {
		return nil, fmt.Errorf("read promotions: %w", err)
	}
	defer rows.Close()
	out := []Promotion{}
	for rows.Next() {
		var p Promotion
		var runs, locks, rollback string
		if err := rows.Scan(&p.ID, &p.PackSHA256, &p.Candidate, &p.Baseline, &p.ApprovedBy, &p.Reason, &runs, &p.ScorerVersion,
			&locks, &rollback, &p.CreatedAt); err != nil {
			return nil, fmt.Errorf("read promotions: %w", err)
		}
		err := errors.Join(json.Unmarshal([]byte(runs), &p.Runs), json.Unmarshal([]byte(locks), &p.Interlocks),
			json.Unmarshal([]byte(rollback), &p.RollbackOn))
		if err != nil {
			return nil, fmt.Errorf("read promotion %d: %w", p.ID, err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
