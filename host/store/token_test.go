package store

import (
	"context"
	"errors"
	"testing"
)

// TestLiveToken: the one answer the API's bearer check and the cockpit's
// session check share — a live token's row, a refusal for an empty, unknown
// or revoked secret, and the database's own error (not a refusal) when the
// lookup fails. On every backend.
func TestLiveToken(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, be.open(t))
			live, tok, err := s.CreateToken(ctx, "acme", "ci")
			if err != nil {
				t.Fatal(err)
			}
			revoked, old, err := s.CreateToken(ctx, "acme", "old")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.RevokeToken(ctx, old.ID); err != nil {
				t.Fatal(err)
			}
			got, err := s.LiveToken(ctx, live)
			if err != nil || got.ID != tok.ID || got.Company != "acme" {
				t.Errorf("LiveToken(live) = %+v, %v, want token %d of acme", got, err, tok.ID)
			}
			for _, c := range []struct {
				name, secret string
				want         error
			}{
				{"empty", "", ErrNoToken},
				{"unknown", "assay_nope", ErrUnknownToken},
				{"revoked", revoked, ErrRevokedToken},
			} {
				_, err := s.LiveToken(ctx, c.secret)
				if !errors.Is(err, c.want) || !TokenRefused(err) {
					t.Errorf("LiveToken(%s) = %v, want %v (a refusal)", c.name, err, c.want)
				}
			}
			s.Close()
			if _, err := s.LiveToken(ctx, live); err == nil || TokenRefused(err) {
				t.Errorf("LiveToken on a closed store = %v, want the database's error, not a refusal", err)
			}
		})
	}
}
