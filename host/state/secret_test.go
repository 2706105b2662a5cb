package state

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// oddToken has characters every encoding changes.
const oddToken = `tk/live+9<Z>&q="s p"\u`

// echoForms are the ways TestCaptureRedactsTokenInEveryEncoding echoes the
// token.
func echoForms(tok string) map[string]string {
	j, _ := json.Marshal(tok)
	return map[string]string{
		"raw":             tok,
		"json":            string(j[1 : len(j)-1]),
		"json slash":      strings.ReplaceAll(string(j[1:len(j)-1]), "/", `\/`),
		"query escaped":   url.QueryEscape(tok),
		"path escaped":    url.PathEscape(tok),
		"base64":          base64.StdEncoding.EncodeToString([]byte(tok)),
		"base64 url raw":  base64.RawURLEncoding.EncodeToString([]byte(tok)),
		"cut to 9":        tok[:9] + "...",
		"cut json to 10":  string(j[1:11]),
		"cut query to 12": url.QueryEscape(tok)[:12],
	}
}

// leaks reports the first start (8 characters or more) of a form of tok
// that s holds.
func leaks(s, tok string) string {
	for name, f := range echoForms(tok) {
		if strings.HasPrefix(name, "cut") {
			continue
		}
		if strings.Contains(s, f[:min(minTokenCut, len(f))]) {
			return name
		}
	}
	return ""
}

// TestCaptureRedactsTokenInEveryEncoding (issue 14 item 7): a server that
// echoes the token, in any encoding or cut short, in an error body or in the
// data it returns, shows it nowhere: not in the error, not in the log, not
// in the snapshot.
func TestCaptureRedactsTokenInEveryEncoding(t *testing.T) {
	t.Parallel()
	for _, tok := range []string{oddToken, token} {
		for name, echo := range echoForms(tok) {
			t.Run(fmt.Sprintf("%s/%s", tok[:4], name), func(t *testing.T) {
				t.Parallel()
				jsonEcho, _ := json.Marshal(echo)
				srv := serve(t, &companyOS{fail: func(n int32, w http.ResponseWriter, r *http.Request) bool {
					switch n {
					case 1: // a 500 (logged, retried) echoing the token
						http.Error(w, "bad token "+echo, http.StatusInternalServerError)
					case 2: // the tasks, with the token in a title
						fmt.Fprintf(w, `{"tasks": [{"id": 1, "title": %s, "state": "open"}]}`, jsonEcho)
					default: // a 401 echoing it
						http.Error(w, `{"error": "token `+echo+` refused"}`, http.StatusUnauthorized)
					}
					return true
				}})
				var logs strings.Builder
				cfg := config(srv)
				cfg.Token = tok
				cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
				snap, err := Capture(context.Background(), cfg)
				if err == nil {
					t.Fatalf("Capture = %+v, want the 401", snap)
				}
				if form := leaks(err.Error(), tok); form != "" {
					t.Errorf("error shows the token (%s form): %v", form, err)
				}
				if form := leaks(logs.String(), tok); form != "" {
					t.Errorf("log shows the token (%s form): %s", form, logs.String())
				}
			})
		}
	}
}

// TestCaptureSnapshotNeverStoresToken (issue 14 item 7): a token a server
// puts in the data is redacted before the snapshot holds it.
func TestCaptureSnapshotNeverStoresToken(t *testing.T) {
	t.Parallel()
	for name, echo := range echoForms(oddToken) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			jsonEcho, _ := json.Marshal("owner " + echo)
			srv := serve(t, &companyOS{fail: func(_ int32, w http.ResponseWriter, r *http.Request) bool {
				if strings.HasSuffix(r.URL.Path, "/tasks") {
					fmt.Fprintf(w, `{"tasks": [{"id": 1, "title": %s, "state": "open"}]}`, jsonEcho)
					return true
				}
				return false
			}})
			cfg := config(srv)
			cfg.Token = oddToken
			snap, err := Capture(context.Background(), cfg)
			if err != nil {
				t.Fatalf("Capture: %v", err)
			}
			stored, _ := json.Marshal(snap)
			if form := leaks(string(stored), oddToken); form != "" {
				t.Errorf("snapshot holds the token (%s form): %s", form, stored)
			}
			if !strings.Contains(string(stored), redacted) {
				t.Errorf("snapshot does not say what was redacted: %s", stored)
			}
		})
	}
}

// TestCaptureNoTokenAcrossOrigins (issue 14 item 7): a redirect to another
// origin (the same host on another port, another scheme) is refused and the
// token is never sent there; a redirect within the origin is followed.
func TestCaptureNoTokenAcrossOrigins(t *testing.T) {
	t.Parallel()
	other := &companyOS{}
	otherSrv := serve(t, other)
	redirectTo := func(base string) *companyOS {
		return &companyOS{fail: func(_ int32, w http.ResponseWriter, r *http.Request) bool {
			http.Redirect(w, r, base+r.URL.Path, http.StatusFound)
			return true
		}}
	}
	srv := serve(t, redirectTo(otherSrv.URL))
	_, err := Capture(context.Background(), config(srv))
	if !errors.Is(err, errCrossOrigin) || !strings.Contains(err.Error(), "another origin") {
		t.Errorf("Capture redirected to %s = %v, want the cross-origin refusal", otherSrv.URL, err)
	}
	if got := other.calls.Load(); got != 0 {
		t.Errorf("the other origin got %d requests (last Authorization %q), want none", got, other.auth.Load())
	}

	// Within the origin: /old/api/... redirects to /api/...
	same := &companyOS{}
	sameSrv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/old/") {
			http.Redirect(w, r, strings.TrimPrefix(r.URL.Path, "/old"), http.StatusMovedPermanently)
			return
		}
		same.ServeHTTP(w, r)
	}))
	cfg := config(sameSrv)
	cfg.APIBase = sameSrv.URL + "/old"
	if _, err := Capture(context.Background(), cfg); err != nil {
		t.Errorf("Capture with a same-origin redirect: %v", err)
	}
	if got := same.auth.Load(); got != "Bearer "+token {
		t.Errorf("same-origin redirect: Authorization %q, want the token", got)
	}
}
