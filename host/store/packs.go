package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// PackTask is one task of a loaded pack, as stored in company_eval_packs.
type PackTask struct {
	PackSHA256 string
	Company    string
	Label      string
	Scorer     string
	Weight     float64
	SliceTags  []string
}

// UpsertPackTasks stores the tasks of a pack in one transaction; a task
// already stored under (pack sha256, label) is updated. A task whose scorer
// the database's CHECK does not allow is an error naming the scorer and
// wrapping ErrScorerNotInEnum.
func (s *Store) UpsertPackTasks(ctx context.Context, tasks []PackTask) error {
	if len(tasks) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store pack tasks: begin: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, s.Rebind(`INSERT INTO company_eval_packs
		(pack_sha256, company, label, scorer, weight, slice_tags, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (pack_sha256, label) DO UPDATE SET
			company = excluded.company, scorer = excluded.scorer,
			weight = excluded.weight, slice_tags = excluded.slice_tags`))
	if err != nil {
		return fmt.Errorf("store pack tasks: %w", err)
	}
	defer stmt.Close()
	now := s.now()
	for _, t := range tasks {
		if t.PackSHA256 == "" || t.Label == "" {
			return fmt.Errorf("store pack task %q: pack sha256 and label are required", t.Label)
		}
		tags := t.SliceTags
		if tags == nil {
			tags = []string{}
		}
		tagsJSON, err := json.Marshal(tags)
		if err != nil {
			return fmt.Errorf("store pack task %q: %w", t.Label, err)
		}
		if _, err := stmt.ExecContext(ctx, t.PackSHA256, t.Company, t.Label, t.Scorer, t.Weight, string(tagsJSON), now); err != nil {
			if strings.Contains(err.Error(), ScorerConstraint) {
				return fmt.Errorf("store pack task %q: scorer %q: %w; add its plugin (assay plugins register BIN) and run assay scorers sync",
					t.Label, t.Scorer, ErrScorerNotInEnum)
			}
			return fmt.Errorf("store pack task %q: %w", t.Label, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store pack tasks: commit: %w", err)
	}
	return nil
}

// PackTasks returns the stored tasks of a pack, by label.
func (s *Store) PackTasks(ctx context.Context, packSHA256 string) ([]PackTask, error) {
	rows, err := s.db.QueryContext(ctx, s.Rebind(`SELECT pack_sha256, company, label, scorer, weight, slice_tags
		FROM company_eval_packs WHERE pack_sha256 = ? ORDER BY label`), packSHA256)
	if err != nil {
		return nil, fmt.Errorf("read pack tasks: %w", err)
	}
	defer rows.Close()
	var out []PackTask
	for rows.Next() {
		var t PackTask
		var tags []byte
		if err := rows.Scan(&t.PackSHA256, &t.Company, &t.Label, &t.Scorer, &t.Weight, &tags); err != nil {
			return nil, fmt.Errorf("read pack tasks: %w", err)
		}
		if err := json.Unmarshal(tags, &t.SliceTags); err != nil {
			return nil, fmt.Errorf("read pack task %q: slice_tags: %w", t.Label, err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
