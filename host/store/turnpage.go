package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// TurnFilter narrows TurnPage: a label prefix, a status, and After, the
// last label of the previous page; each is ignored when empty.
type TurnFilter struct {
	Label  string
	Status string
	After  string
}

// TurnPage returns the latest revision of each turn of a run's latest
// attempt, by label, at most limit, filtered and paged (by key, after
// f.After) in SQL, so any page stays fast however many turns are stored
// (docs/serve.md). Its rows leave the metrics row out (Metrics is nil), which
// no page shows.
func (s *Store) TurnPage(ctx context.Context, runID int64, f TurnFilter, limit int) ([]TurnRow, error) {
	q := `SELECT t.id, ` + prefixed("t.", turnPageColumns) + `, NULL, ` + TraceKeptColumn("t.") + ` FROM company_eval_turns t
		JOIN company_eval_runs r ON r.id = t.run_id AND r.attempt = t.attempt
		WHERE t.run_id = ? AND t.revision = (SELECT max(t2.revision) FROM company_eval_turns t2
			WHERE t2.run_id = t.run_id AND t2.attempt = t.attempt AND t2.label = t.label)`
	args := []any{runID}
	switch {
	case f.Label == "":
	case s.dialect == Postgres: // bytewise, a range of ix_company_eval_turns_label_c
		q += ` AND (t.label COLLATE "C") >= ? AND (t.label COLLATE "C") < ?`
		args = append(args, f.Label, f.Label+"\U0010FFFF")
	default: // SQLite compares bytes: the prefix is a range of the unique index
		q += ` AND t.label >= ? AND t.label < ?`
		args = append(args, f.Label, f.Label+"\U0010FFFF")
	}
	if f.After != "" {
		q += ` AND t.label > ?`
		args = append(args, f.After)
	}
	if f.Status != "" {
		q += ` AND t.status = ?`
		args = append(args, f.Status)
	}
	q += ` ORDER BY t.label LIMIT ?`
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, s.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("read turns of run %d: %w", runID, err)
	}
	return scanTurns(rows, runID)
}

// prefixed qualifies a comma-separated column list with a table alias.
func prefixed(alias, cols string) string {
	out := make([]byte, 0, len(cols)+64)
	start := true
	for i := 0; i < len(cols); i++ {
		c := cols[i]
		if start && c != ' ' && c != '\t' && c != '\n' {
			out = append(out, alias...)
			start = false
		}
		if c == ',' {
			start = true
		}
		out = append(out, c)
	}
	return string(out)
}

// RunSummaries returns a pack's stored runs without counting their turns
// (RunRow.Turns is zero), ordered by candidate and id: cheap however many
// turns are stored.
func (s *Store) RunSummaries(ctx context.Context, packSHA256 string) ([]RunRow, error) {
	return s.queryRuns(ctx, `SELECT `+lightRunColumns+` FROM company_eval_runs r
		WHERE r.pack_sha256 = ? ORDER BY r.candidate, r.id`, packSHA256)
}

// queryRuns reads the runs a query of run columns selects.
func (s *Store) queryRuns(ctx context.Context, q string, args ...any) ([]RunRow, error) {
	rows, err := s.db.QueryContext(ctx, s.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	defer rows.Close()
	var out []RunRow
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("read runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RunSummary is RunByID without counting the run's turns.
func (s *Store) RunSummary(ctx context.Context, id int64) (RunRow, error) {
	return s.runByID(ctx, lightRunColumns, id)
}

// packCompany is a query of the company.id of the pack whose sha256 is
// shaExpr (a placeholder or a column): one task row answers, the first by
// label (an index read), since a pack's sha256 covers its company.id and
// so its task rows share their company.
func packCompany(shaExpr string) string {
	return `SELECT p.company FROM company_eval_packs p WHERE p.pack_sha256 = ` + shaExpr + ` ORDER BY p.label LIMIT 1`
}

// PackOfCompany reports whether a pack (by sha256) was recorded with
// company as its company.id.
func (s *Store) PackOfCompany(ctx context.Context, packSHA256, company string) (bool, error) {
	var of string
	err := s.db.QueryRowContext(ctx, s.Rebind(packCompany("?")), packSHA256).Scan(&of)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read pack %s: %w", packSHA256, err)
	}
	return of == company, nil
}

// ScoreHistogram counts a run's latest turn scores (latest attempt and
// revision) in bins equal
// bins over [0,1] (a score of 1 falls in the last), computed in SQL.
func (s *Store) ScoreHistogram(ctx context.Context, runID int64, attempt, bins int) ([]int, error) {
	bin := `CAST(t.turn_score * ? AS INTEGER)` // SQLite truncates toward zero
	if s.dialect == Postgres {
		bin = `CAST(FLOOR(t.turn_score * ?) AS INTEGER)` // Postgres would round
	}
	rows, err := s.db.QueryContext(ctx, s.Rebind(`SELECT `+bin+` AS b, count(*) FROM company_eval_turns t
		WHERE t.run_id = ? AND t.attempt = ? AND t.turn_score IS NOT NULL AND t.revision = (SELECT max(t2.revision)
			FROM company_eval_turns t2 WHERE t2.run_id = t.run_id AND t2.attempt = t.attempt AND t2.label = t.label)
		GROUP BY b`), float64(bins), runID, attempt)
	if err != nil {
		return nil, fmt.Errorf("read score histogram of run %d: %w", runID, err)
	}
	defer rows.Close()
	out := make([]int, bins)
	for rows.Next() {
		var b, n int
		if err := rows.Scan(&b, &n); err != nil {
			return nil, fmt.Errorf("read score histogram of run %d: %w", runID, err)
		}
		out[min(max(b, 0), bins-1)] += n
	}
	return out, rows.Err()
}
