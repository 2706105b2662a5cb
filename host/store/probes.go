package store

import (
	"context"
	"fmt"
	"time"
)

// Probe statuses (docs/evidence.md).
const (
	ProbeOK                 = "ok"
	ProbeNondeterministic   = "nondeterministic"
	ProbeChangedSameVersion = "changed_without_version_change"
	ProbeNotProbed          = "not_probed"
)

// ProbeRow is one scorer's result of one `assay scorers probe`.
type ProbeRow struct {
	ScorerID  string    `json:"id"`
	Version   string    `json:"version"`
	SHA256    string    `json:"sha256"`
	Status    string    `json:"status"`
	Reason    string    `json:"reason"`
	Turns     int       `json:"turns"` // stored turns re-scored
	Repeats   int       `json:"repeats"`
	Seed      int64     `json:"seed"`
	CreatedAt time.Time `json:"created_at"` // set when read back
}

// InsertProbes records a probe's results.
func (s *Store) InsertProbes(ctx context.Context, rows []ProbeRow) error {
	now := s.now()
	for _, r := range rows {
		_, err := s.db.ExecContext(ctx, s.Rebind(`INSERT INTO company_eval_probes
			(scorer_id, version, sha256, status, reason, turns, repeats, seed, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			r.ScorerID, r.Version, r.SHA256, r.Status, r.Reason, r.Turns, r.Repeats, r.Seed, now)
		if err != nil {
			return fmt.Errorf("record probe of %s: %w", r.ScorerID, err)
		}
	}
	return nil
}

// LatestProbes returns each scorer's latest probe, by scorer ID.
func (s *Store) LatestProbes(ctx context.Context) (map[string]ProbeRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT scorer_id, version, sha256, status, reason, turns, repeats, seed, created_at
		FROM company_eval_probes ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read probes: %w", err)
	}
	defer rows.Close()
	out := map[string]ProbeRow{}
	for rows.Next() {
		var r ProbeRow
		if err := rows.Scan(&r.ScorerID, &r.Version, &r.SHA256, &r.Status, &r.Reason, &r.Turns, &r.Repeats, &r.Seed, &r.CreatedAt); err != nil {
			return nil, fmt.Errorf("read probes: %w", err)
		}
		out[r.ScorerID] = r // in id order: the latest wins
	}
	return out, rows.Err()
}
