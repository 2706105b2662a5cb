package server

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/assay-eval/assay/host/store"
)

// Error kinds of Authenticate.
var (
	ErrNoToken      = errors.New("no token")
	ErrUnknownToken = errors.New("unknown token")
	ErrRevokedToken = errors.New("revoked token")
)

// Authenticate finds the live token whose secret this is.
func Authenticate(ctx context.Context, st *store.Store, secret string) (store.Token, error) {
	if secret == "" {
		return store.Token{}, ErrNoToken
	}
	t, err := st.TokenBySecret(ctx, secret)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Token{}, ErrUnknownToken
	case err != nil:
		return store.Token{}, err
	case t.RevokedAt != nil:
		return store.Token{}, ErrRevokedToken
	}
	return t, nil
}

type tokenKey struct{}

// tokenOf is the request's authenticated token (set by requireToken).
func tokenOf(r *http.Request) store.Token {
	t, _ := r.Context().Value(tokenKey{}).(store.Token)
	return t
}

// requireToken answers 401 unless the request carries a live bearer token.
func (s *Server) requireToken(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		secret, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			secret = ""
		}
		t, err := Authenticate(r.Context(), s.cfg.Store, strings.TrimSpace(secret))
		if err != nil {
			if !errors.Is(err, ErrNoToken) && !errors.Is(err, ErrUnknownToken) && !errors.Is(err, ErrRevokedToken) {
				s.log.Error("authenticating", logErr, err)
				writeProblem(w, http.StatusInternalServerError, "the token could not be checked", nil)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="assay"`)
			writeProblem(w, http.StatusUnauthorized, "a valid bearer token is required: "+err.Error(), nil)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), tokenKey{}, t)))
	}
}
