package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Upload statuses of `assay serve` (docs/serve.md).
const (
	UploadQueued    = "queued"
	UploadRunning   = "running"
	UploadCompleted = "completed"
	UploadFailed    = "failed"
)

// Upload is one POST /v1/runs: a turns file verified by the server.
type Upload struct {
	ID             int64
	Company        string
	TokenID        int64
	PackName       string
	PackSHA256     string
	Candidate      string
	IdempotencyKey string
	Status         string
	Turns, Done    int
	Summary        json.RawMessage // the verification's summary.json; nil until completed
	Error          string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

const uploadColumns = `id, company, token_id, pack_name, pack_sha256, candidate, idempotency_key, status,
	turns, done, summary, error, created_at, updated_at`

func scanUpload(sc scanner) (Upload, error) {
	var u Upload
	var sum sql.NullString
	err := sc.Scan(&u.ID, &u.Company, &u.TokenID, &u.PackName, &u.PackSHA256, &u.Candidate, &u.IdempotencyKey,
		&u.Status, &u.Turns, &u.Done, &sum, &u.Error, &u.CreatedAt, &u.UpdatedAt)
	if sum.Valid {
		u.Summary = json.RawMessage(sum.String)
	}
	return u, err
}

// CreateUpload records a new upload as queued. With an idempotency key
// the token already used, it returns that upload instead and created false.
func (s *Store) CreateUpload(ctx context.Context, u Upload) (Upload, bool, error) {
	if u.IdempotencyKey != "" {
		prev, err := s.UploadByKey(ctx, u.TokenID, u.IdempotencyKey)
		if err == nil {
			return prev, false, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return Upload{}, false, err
		}
	}
	now := s.now()
	err := s.db.QueryRowContext(ctx, s.Rebind(`INSERT INTO assay_server_runs
		(company, token_id, pack_name, pack_sha256, candidate, idempotency_key, status, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?) RETURNING id`),
		u.Company, u.TokenID, u.PackName, u.PackSHA256, u.Candidate, u.IdempotencyKey, now, now).Scan(&u.ID)
	if err != nil {
		if u.IdempotencyKey != "" { // a concurrent upload with the key won the insert
			if prev, perr := s.UploadByKey(ctx, u.TokenID, u.IdempotencyKey); perr == nil {
				return prev, false, nil
			}
		}
		return Upload{}, false, fmt.Errorf("record upload: %w", err)
	}
	u.Status, u.CreatedAt, u.UpdatedAt = UploadQueued, now, now
	return u, true, nil
}

// UploadOf reads a company's upload; another company's, like an unknown
// one, wraps ErrNotFound.
func (s *Store) UploadOf(ctx context.Context, company string, id int64) (Upload, error) {
	return s.uploadWhere(ctx, `company = ? AND id = ?`, company, id)
}

func (s *Store) uploadWhere(ctx context.Context, where string, args ...any) (Upload, error) {
	row := s.db.QueryRowContext(ctx, s.Rebind(`SELECT `+uploadColumns+` FROM assay_server_runs WHERE `+where), args...)
	u, err := scanUpload(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Upload{}, fmt.Errorf("read upload: %w", ErrNotFound)
	}
	if err != nil {
		return Upload{}, fmt.Errorf("read upload: %w", err)
	}
	return u, nil
}

// Uploads lists a company's uploads, newest first, at most limit from
// offset.
func (s *Store) Uploads(ctx context.Context, company string, limit, offset int) ([]Upload, error) {
	rows, err := s.db.QueryContext(ctx, s.Rebind(`SELECT `+uploadColumns+` FROM assay_server_runs
		WHERE company = ? ORDER BY id DESC LIMIT ? OFFSET ?`), company, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("list uploads: %w", err)
	}
	defer rows.Close()
	var out []Upload
	for rows.Next() {
		u, err := scanUpload(rows)
		if err != nil {
			return nil, fmt.Errorf("list uploads: %w", err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// UpdateUpload records an upload's status and progress; summary and errMsg
// are kept when empty.
func (s *Store) UpdateUpload(ctx context.Context, id int64, status string, turns, done int, summary []byte, errMsg string) error {
	_, err := s.db.ExecContext(ctx, s.Rebind(`UPDATE assay_server_runs SET status = ?, turns = ?, done = ?,
		summary = COALESCE(?, summary), error = CASE WHEN ? = '' THEN error ELSE ? END, updated_at = ? WHERE id = ?`),
		status, turns, done, nullJSON(summary), errMsg, errMsg, s.now(), id)
	if err != nil {
		return fmt.Errorf("update upload %d: %w", id, err)
	}
	return nil
}

// FailUnfinishedUploads marks uploads left queued or running (by a server
// that stopped) failed with msg, and returns how many.
func (s *Store) FailUnfinishedUploads(ctx context.Context, msg string) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.Rebind(`UPDATE assay_server_runs SET status = 'failed', error = ?, updated_at = ?
		WHERE status IN ('queued', 'running')`), msg, s.now())
	if err != nil {
		return 0, fmt.Errorf("fail unfinished uploads: %w", err)
	}
	return res.RowsAffected()
}

// UploadByKey finds the upload a token made with an idempotency key; none
// wraps ErrNotFound.
func (s *Store) UploadByKey(ctx context.Context, tokenID int64, key string) (Upload, error) {
	return s.uploadWhere(ctx, `token_id = ? AND idempotency_key = ?`, tokenID, key)
}
