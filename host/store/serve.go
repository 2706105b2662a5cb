package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Token is a stored API token of `assay serve` (docs/serve.md); only the
// sha256 of the secret is stored.
type Token struct {
	ID        int64
	Company   string
	Name      string
	CreatedAt time.Time
	RevokedAt *time.Time
}

// tokenPrefix starts every token, so a leaked one is recognisable.
const tokenPrefix = "assay_"

// HashToken is the stored form of a token: hex sha256.
func HashToken(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// CreateToken makes a new token for company and returns the secret, which
// is not stored and cannot be read again.
func (s *Store) CreateToken(ctx context.Context, company, name string) (string, Token, error) {
	if company == "" {
		return "", Token{}, errors.New("create token: a company is required")
	}
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", Token{}, fmt.Errorf("create token: %w", err)
	}
	secret := tokenPrefix + hex.EncodeToString(raw[:])
	t := Token{Company: company, Name: name, CreatedAt: s.now()}
	err := s.db.QueryRowContext(ctx, s.Rebind(`INSERT INTO assay_tokens (company, name, hash, created_at)
		VALUES (?, ?, ?, ?) RETURNING id`), company, name, HashToken(secret), t.CreatedAt).Scan(&t.ID)
	if err != nil {
		return "", Token{}, fmt.Errorf("create token: %w", err)
	}
	return secret, t, nil
}

// Tokens lists every token, revoked ones included, by id.
func (s *Store) Tokens(ctx context.Context) ([]Token, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, company, name, created_at, revoked_at FROM assay_tokens ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func scanToken(sc scanner) (Token, error) {
	var t Token
	var revoked sql.NullTime
	if err := sc.Scan(&t.ID, &t.Company, &t.Name, &t.CreatedAt, &revoked); err != nil {
		return Token{}, err
	}
	if revoked.Valid {
		r := revoked.Time
		t.RevokedAt = &r
	}
	return t, nil
}

// RevokeToken revokes a token; an unknown id wraps ErrNotFound. Revoking a
// revoked token keeps its first revocation time.
func (s *Store) RevokeToken(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, s.Rebind(`UPDATE assay_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`), s.now(), id)
	if err != nil {
		return fmt.Errorf("revoke token %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("revoke token %d: %w", id, ErrNotFound)
	}
	return nil
}

// TokenBySecret finds the token whose secret this is; an unknown secret
// wraps ErrNotFound. A revoked token is returned with RevokedAt set.
func (s *Store) TokenBySecret(ctx context.Context, secret string) (Token, error) {
	row := s.db.QueryRowContext(ctx, s.Rebind(`SELECT id, company, name, created_at, revoked_at FROM assay_tokens WHERE hash = ?`), HashToken(secret))
	t, err := scanToken(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, fmt.Errorf("find token: %w", ErrNotFound)
	}
	if err != nil {
		return Token{}, fmt.Errorf("find token: %w", err)
	}
	return t, nil
}

// Error kinds of LiveToken.
var (
	ErrNoToken      = errors.New("no token")
	ErrUnknownToken = errors.New("unknown token")
	ErrRevokedToken = errors.New("revoked token")
)

// LiveToken is the unrevoked token whose secret this is: ErrNoToken for an
// empty secret, ErrUnknownToken or ErrRevokedToken for a secret that grants
// nothing; any other error is the database's. The API's bearer check and the
// cockpit's session check both ask it.
func (s *Store) LiveToken(ctx context.Context, secret string) (Token, error) {
	if secret == "" {
		return Token{}, ErrNoToken
	}
	t, err := s.TokenBySecret(ctx, secret)
	switch {
	case errors.Is(err, ErrNotFound):
		return Token{}, ErrUnknownToken
	case err != nil:
		return Token{}, err
	case t.RevokedAt != nil:
		return Token{}, ErrRevokedToken
	}
	return t, nil
}

// TokenRefused reports whether err is LiveToken's answer for a secret that
// grants nothing, rather than a failure to look it up.
func TokenRefused(err error) bool {
	return errors.Is(err, ErrNoToken) || errors.Is(err, ErrUnknownToken) || errors.Is(err, ErrRevokedToken)
}

// ServerPack is a pack uploaded to `assay serve`.
type ServerPack struct {
	Company   string
	Name      string
	SHA256    string
	Source    []byte
	UpdatedAt time.Time
}

// PutServerPack stores or replaces a company's pack.
func (s *Store) PutServerPack(ctx context.Context, p ServerPack) error {
	_, err := s.db.ExecContext(ctx, s.Rebind(`INSERT INTO assay_server_packs (company, name, sha256, source, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (company, name) DO UPDATE SET
		sha256 = excluded.sha256, source = excluded.source, updated_at = excluded.updated_at`),
		p.Company, p.Name, p.SHA256, string(p.Source), s.now())
	if err != nil {
		return fmt.Errorf("store pack %s: %w", p.Name, err)
	}
	return nil
}

// ServerPacks lists a company's packs by name, without their source.
func (s *Store) ServerPacks(ctx context.Context, company string) ([]ServerPack, error) {
	rows, err := s.db.QueryContext(ctx, s.Rebind(`SELECT company, name, sha256, updated_at FROM assay_server_packs
		WHERE company = ? ORDER BY name`), company)
	if err != nil {
		return nil, fmt.Errorf("list packs: %w", err)
	}
	defer rows.Close()
	out := []ServerPack{}
	for rows.Next() {
		var p ServerPack
		if err := rows.Scan(&p.Company, &p.Name, &p.SHA256, &p.UpdatedAt); err != nil {
			return nil, fmt.Errorf("list packs: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// RecordedPack is a pack a verification recorded for a company (its
// company.id) that the company never uploaded to the server: a pack
// verified from the command line into the server's database.
type RecordedPack struct {
	Name   string // the name its runs recorded
	SHA256 string
	// Older counts the other versions (sha256s) of the same name with runs,
	// whose latest run was begun before this one's.
	Older int
}

// RecordedPacks lists the latest version of each of the company's recorded
// packs that have runs, by name: the sha256 whose run was begun last,
// among those no upload of the company's used (neither a server pack's
// current version nor an earlier one that a POST /v1/runs verified). The
// query reads the runs grouped by pack and one task row of each pack
// (packCompany): its cost is the number of packs with runs, not of their
// tasks.
func (s *Store) RecordedPacks(ctx context.Context, company string) ([]RecordedPack, error) {
	rows, err := s.db.QueryContext(ctx, s.Rebind(`SELECT r.pack_sha256, r.name FROM
		(SELECT pack_sha256, max(pack_name) AS name, max(id) AS last FROM company_eval_runs GROUP BY pack_sha256) r
		WHERE (`+packCompany("r.pack_sha256")+`) = ?
		AND r.pack_sha256 NOT IN (SELECT sha256 FROM assay_server_packs WHERE company = ?
			UNION SELECT pack_sha256 FROM assay_server_runs WHERE company = ?)
		ORDER BY r.name, r.last DESC`), company, company, company)
	if err != nil {
		return nil, fmt.Errorf("list recorded packs: %w", err)
	}
	defer rows.Close()
	out := []RecordedPack{}
	for rows.Next() {
		var p RecordedPack
		if err := rows.Scan(&p.SHA256, &p.Name); err != nil {
			return nil, fmt.Errorf("list recorded packs: %w", err)
		}
		if n := len(out); n > 0 && out[n-1].Name == p.Name {
			out[n-1].Older++ // an earlier version: the latest came first
			continue
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// ServerPack reads one of a company's packs; another company's pack, like
// an unknown one, wraps ErrNotFound.
func (s *Store) ServerPack(ctx context.Context, company, name string) (ServerPack, error) {
	p := ServerPack{Company: company, Name: name}
	var src string
	err := s.db.QueryRowContext(ctx, s.Rebind(`SELECT sha256, source, updated_at FROM assay_server_packs
		WHERE company = ? AND name = ?`), company, name).Scan(&p.SHA256, &src, &p.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return ServerPack{}, fmt.Errorf("read pack %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return ServerPack{}, fmt.Errorf("read pack %s: %w", name, err)
	}
	p.Source = []byte(src)
	return p, nil
}
