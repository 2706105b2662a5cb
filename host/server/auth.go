package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/assay-eval/assay/host/store"
)

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
		t, err := s.cfg.Store.LiveToken(r.Context(), strings.TrimSpace(secret))
		if err != nil {
			if !store.TokenRefused(err) {
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
