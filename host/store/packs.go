package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
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
// already stored under (pack sha256, label) is updated, and a task given
// twice is stored as its last. A task whose scorer the database's CHECK
// does not allow is an error naming the task and the scorer and wrapping
// ErrScorerNotInEnum; nothing of the call is stored then.
func (s *Store) UpsertPackTasks(ctx context.Context, tasks []PackTask) error {
	if len(tasks) == 0 {
		return nil
	}
	tasks, tags, err := uniqueTasks(tasks)
	if err != nil {
		return err
	}
	now := s.now()
	if s.dialect == Postgres {
		// Read outside the write: a row deleted after the read is as if
		// deleted after this call.
		var left []PackTask
		var leftTags []string
		if left, leftTags, err = s.unstoredPackTasks(ctx, s.db, tasks, tags); err != nil {
			return wrapf(packTasksWhat, err)
		}
		err = s.pgExec(ctx, pgPackStatements(left, leftTags, now))
	} else {
		err = s.sqliteUpsertPackTasks(ctx, tasks, tags, now)
	}
	if err != nil && ctx.Err() == nil && !IsUnavailable(err) {
		// A task was refused (its scorer not in the CHECK, say): store
		// them one by one, in a transaction that fails at that task and
		// names it.
		return s.upsertPackTasksEach(ctx, tasks, tags, now)
	}
	return err
}

// uniqueTasks checks tasks, keeps the last of each (pack sha256, label) in
// the place of its first, and returns each one's slice tags as JSON.
func uniqueTasks(tasks []PackTask) ([]PackTask, []string, error) {
	type key struct{ pack, label string }
	at := make(map[key]int, len(tasks))
	out := make([]PackTask, 0, len(tasks))
	for _, t := range tasks {
		if t.PackSHA256 == "" || t.Label == "" {
			return nil, nil, fmt.Errorf("store pack task %q: pack sha256 and label are required", t.Label)
		}
		k := key{t.PackSHA256, t.Label}
		if i, seen := at[k]; seen {
			out[i] = t
			continue
		}
		at[k] = len(out)
		out = append(out, t)
	}
	tags := make([]string, len(out))
	for i, t := range out {
		if len(t.SliceTags) == 0 {
			tags[i] = emptyJSONArray
			continue
		}
		b, err := json.Marshal(t.SliceTags)
		if err != nil {
			return nil, nil, fmt.Errorf("store pack task %q: %w", t.Label, err)
		}
		tags[i] = string(b)
	}
	return out, tags, nil
}

// sqliteUpsertPackTasks upserts tasks in one transaction with the prepared
// multi-row statements, leaving out the tasks already stored as they are
// (unstoredPackTasks): verifying a pack again rewrites none of its rows.
func (s *Store) sqliteUpsertPackTasks(ctx context.Context, tasks []PackTask, tags []string, now time.Time) error {
	// Every size, since the tasks left to write are known only inside the
	// transaction.
	if err := s.sq.packs.prepareAll(ctx, s.db); err != nil {
		return wrapf(packTasksWhat, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return wrapf(packTasksWhat+": begin", err)
	}
	defer tx.Rollback()
	if tasks, tags, err = s.unstoredPackTasks(ctx, tx, tasks, tags); err != nil {
		return wrapf(packTasksWhat, err)
	}
	at := s.sqliteTime(now)
	err = s.sq.packs.exec(ctx, tx, len(tasks), func(args []any, i int) []any {
		t := &tasks[i]
		return append(args, t.PackSHA256, t.Company, t.Label, t.Scorer, t.Weight, tags[i], at)
	})
	if err != nil {
		return wrapf(packTasksWhat, err)
	}
	if err := tx.Commit(); err != nil {
		return wrapf(packTasksWhat+": commit", err)
	}
	s.wal.committed(int64(len(tasks)) * rowBytes)
	return nil
}

// unstoredPackTasks returns the tasks (unique, with their slice tags as
// JSON) that q does not hold as they are: new, or stored with another
// company, scorer, weight or slice tags. What the upsert would write for a
// task stored as it is is what is stored (the upsert keeps created_at), so
// leaving it out stores the same rows. A stored row is not checked again
// against the scorer CHECK: SyncScorerEnum never drops a scorer that a
// stored task uses.
func (s *Store) unstoredPackTasks(ctx context.Context, q querier, tasks []PackTask, tags []string) ([]PackTask, []string, error) {
	type row struct {
		company, scorer, tags string
		weight                float64
	}
	stored := map[string]map[string]row{} // pack sha256 -> label -> row
	for _, t := range tasks {
		if _, ok := stored[t.PackSHA256]; ok {
			continue
		}
		rows, err := q.QueryContext(ctx, s.Rebind(`SELECT label, company, scorer, weight, slice_tags
			FROM company_eval_packs WHERE pack_sha256 = ?`), t.PackSHA256)
		if err != nil {
			return nil, nil, err
		}
		labels := map[string]row{}
		for rows.Next() {
			var label string
			var r row
			if err := rows.Scan(&label, &r.company, &r.scorer, &r.weight, &r.tags); err != nil {
				rows.Close()
				return nil, nil, err
			}
			labels[label] = r
		}
		if err := rows.Close(); err != nil {
			return nil, nil, err
		}
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
		stored[t.PackSHA256] = labels
	}
	held := false
	for _, labels := range stored {
		held = held || len(labels) > 0
	}
	if !held { // a new pack: every task is written
		return tasks, tags, nil
	}
	var outTasks []PackTask
	var outTags []string
	for i, t := range tasks {
		r, ok := stored[t.PackSHA256][t.Label]
		if ok && r.company == t.Company && r.scorer == t.Scorer && r.tags == tags[i] &&
			math.Float64bits(r.weight) == math.Float64bits(t.Weight) {
			continue
		}
		outTasks = append(outTasks, t)
		outTags = append(outTags, tags[i])
	}
	return outTasks, outTags, nil
}

// upsertPackTasksEach upserts tasks one statement each, in one
// transaction, and names the task a statement fails at.
func (s *Store) upsertPackTasksEach(ctx context.Context, tasks []PackTask, tags []string, now time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store pack tasks: begin: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, s.Rebind(packsInsert.sql(1)))
	if err != nil {
		return fmt.Errorf("store pack tasks: %w", err)
	}
	defer stmt.Close()
	for i, t := range tasks {
		if _, err := stmt.ExecContext(ctx, t.PackSHA256, t.Company, t.Label, t.Scorer, t.Weight, tags[i], now); err != nil {
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
