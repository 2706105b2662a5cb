package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assay-eval/assay/pkg/companyos"
)

const token = "s3cr3t-token-value"

const tasksBody = `{"tasks": [
  {"id": 12, "title": "Investigate build", "state": "open", "priority": 7, "company_id": "acme",
   "context_notes": [{"at": "2026-11-30T07:00:00Z", "actor": "devops", "text": "runner out of disk"}]}
]}`

const memoryBody = `{"entries": [{"id": "m1", "title": "Runners", "body": "arm64 disk is 20 GB", "tags": ["ci"], "embedding": [0.1]}], "next": null}`

// companyOS serves the Company OS shapes for company "acme"; fail, when set,
// answers instead for the requests it returns true for.
type companyOS struct {
	calls atomic.Int32
	auth  atomic.Value // last Authorization header
	fail  func(n int32, w http.ResponseWriter, r *http.Request) bool
}

func (c *companyOS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := c.calls.Add(1)
	c.auth.Store(r.Header.Get("Authorization"))
	if c.fail != nil && c.fail(n, w, r) {
		return
	}
	switch r.URL.EscapedPath() {
	case "/api/company/companies/acme/tasks", "/os/api/company/companies/acme%2Finc/tasks":
		fmt.Fprint(w, tasksBody)
	case "/api/company/companies/acme/memory", "/os/api/company/companies/acme%2Finc/memory":
		fmt.Fprint(w, memoryBody)
	default:
		http.Error(w, `{"error":"no such company"}`, http.StatusNotFound)
	}
}

func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func config(srv *httptest.Server) CaptureConfig {
	return CaptureConfig{APIBase: srv.URL, Company: "acme", Token: token, HTTP: srv.Client(),
		Timeout: 5 * time.Second, Retries: 2, Backoff: time.Millisecond}
}

func TestCaptureShapes(t *testing.T) {
	t.Parallel()
	os := &companyOS{}
	srv := serve(t, os)
	got, err := Capture(context.Background(), config(srv))
	if err != nil {
		t.Fatalf("Capture() = %v", err)
	}
	want := &companyos.Snapshot{
		Tasks: []companyos.Task{{ID: "12", Title: "Investigate build", State: "open", Priority: fp(7),
			ContextNotes: []companyos.Note{{At: "2026-11-30T07:00:00Z", Actor: "devops", Text: "runner out of disk"}}}},
		Memory: []companyos.MemoryEntry{{ID: "m1", Title: "Runners", Body: "arm64 disk is 20 GB", Tags: []string{"ci"}}},
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(companyos.Snapshot{}), cmpopts.IgnoreFields(companyos.Snapshot{}, "CapturedAt")); d != "" {
		t.Errorf("Capture() mismatch (-want +got):\n%s", d)
	}
	at, err := time.Parse(time.RFC3339, got.CapturedAt)
	if err != nil || !strings.HasSuffix(got.CapturedAt, "Z") || time.Since(at) > time.Hour {
		t.Errorf("Capture().CapturedAt = %q (%v), want RFC 3339 UTC now", got.CapturedAt, err)
	}
	if a := os.auth.Load(); a != "Bearer "+token {
		t.Errorf("Authorization = %q, want the bearer token", a)
	}
	if n := os.calls.Load(); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
}

func TestCaptureWithoutToken(t *testing.T) {
	t.Parallel()
	os := &companyOS{}
	srv := serve(t, os)
	cfg := config(srv)
	cfg.Token = ""
	if _, err := Capture(context.Background(), cfg); err != nil {
		t.Fatalf("Capture() = %v", err)
	}
	if a := os.auth.Load(); a != "" {
		t.Errorf("Authorization = %q, want none", a)
	}
}

func TestCapturePathPrefixAndEscaping(t *testing.T) {
	t.Parallel()
	srv := serve(t, &companyOS{})
	cfg := config(srv)
	cfg.APIBase, cfg.Company = srv.URL+"/os/", "acme/inc"
	if _, err := Capture(context.Background(), cfg); err != nil {
		t.Fatalf("Capture(api base with path, company with a slash) = %v", err)
	}
}

func TestCaptureErrors(t *testing.T) {
	t.Parallel()
	status := func(code int, body string) func(int32, http.ResponseWriter, *http.Request) bool {
		return func(_ int32, w http.ResponseWriter, _ *http.Request) bool {
			w.WriteHeader(code)
			fmt.Fprint(w, body)
			return true
		}
	}
	tests := []struct {
		name      string
		company   string
		retries   int
		fail      func(int32, http.ResponseWriter, *http.Request) bool
		wantCalls int32
		wantErr   []string
	}{
		{"404 names URL, status and body", "nobody", 2, nil, 1,
			[]string{"/api/company/companies/nobody/tasks", "404 Not Found", "no such company"}},
		{"500 retried then given up", "acme", 2, status(500, "database down"), 3,
			[]string{"after 3 attempts", "/tasks", "500 Internal Server Error", "database down"}},
		{"500 without retries", "acme", 0, status(503, "maintenance"), 1,
			[]string{"503 Service Unavailable", "maintenance"}},
		{"401 body echoing the token is redacted", "acme", 2, func(_ int32, w http.ResponseWriter, r *http.Request) bool {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, "bad credentials: %s", r.Header.Get("Authorization"))
			return true
		}, 1, []string{"401 Unauthorized", "Bearer [redacted]"}},
		{"long error body truncated", "acme", 0, status(400, strings.Repeat("x", 5000)), 1,
			[]string{"400 Bad Request", "... (5000 bytes)"}},
		{"malformed JSON", "acme", 2, func(_ int32, w http.ResponseWriter, _ *http.Request) bool {
			fmt.Fprint(w, "{\"tasks\": [\n  {\"id\": 1,}\n]}")
			return true
		}, 1, []string{"/tasks", "not valid JSON at line 2, col 12"}},
		{"wrong shape", "acme", 2, func(_ int32, w http.ResponseWriter, _ *http.Request) bool {
			fmt.Fprint(w, `{"items": []}`)
			return true
		}, 1, []string{`response has no "tasks" list`}},
		{"wrong field type", "acme", 2, func(_ int32, w http.ResponseWriter, _ *http.Request) bool {
			fmt.Fprint(w, `{"tasks": [{"priority": "high"}]}`)
			return true
		}, 1, []string{"unexpected response", "tasks[0].priority: want a number"}},
		{"memory failure after tasks", "acme", 1, func(_ int32, w http.ResponseWriter, r *http.Request) bool {
			if strings.HasSuffix(r.URL.Path, "/memory") {
				http.Error(w, "gone", http.StatusGone)
				return true
			}
			return false
		}, 2, []string{"/memory", "410 Gone"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			os := &companyOS{fail: tt.fail}
			srv := serve(t, os)
			cfg := config(srv)
			cfg.Company, cfg.Retries = tt.company, tt.retries
			snap, err := Capture(context.Background(), cfg)
			if err == nil {
				t.Fatalf("Capture() = %v, nil; want an error", snap)
			}
			if !errors.Is(err, ErrCapture) {
				t.Errorf("Capture() error %v is not ErrCapture", err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Capture() error = %q, want it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("Capture() error = %q shows the token", err)
			}
			if n := os.calls.Load(); n != tt.wantCalls {
				t.Errorf("requests = %d, want %d", n, tt.wantCalls)
			}
		})
	}
}

func TestCapture500Then200(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	os := &companyOS{fail: func(n int32, w http.ResponseWriter, _ *http.Request) bool {
		if n == 1 {
			http.Error(w, "try again "+token, http.StatusBadGateway)
			return true
		}
		return false
	}}
	srv := serve(t, os)
	cfg := config(srv)
	cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	snap, err := Capture(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Capture() after one 502 = %v", err)
	}
	if len(snap.Tasks) != 1 || len(snap.Memory) != 1 {
		t.Errorf("Capture() = %d tasks, %d memory entries, want 1 and 1", len(snap.Tasks), len(snap.Memory))
	}
	if n := os.calls.Load(); n != 3 {
		t.Errorf("requests = %d, want 3 (502, 200, 200)", n)
	}
	if !strings.Contains(logs.String(), "retrying") || strings.Contains(logs.String(), token) {
		t.Errorf("logs = %s, want a retry notice without the token", logs.String())
	}
}

func TestCaptureSlowServer(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	cfg := config(srv)
	cfg.Timeout = 50 * time.Millisecond
	_, err := Capture(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "no answer within the 50ms timeout") || !strings.Contains(err.Error(), "/tasks") {
		t.Errorf("Capture(slow server) = %v, want a timeout naming the URL", err)
	}
}

func TestCaptureConnectionError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	cfg := CaptureConfig{APIBase: url, Company: "acme", Token: token, Retries: 1, Backoff: time.Millisecond, Timeout: 5 * time.Second}
	_, err := Capture(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), url+"/api/company/companies/acme/tasks") || strings.Contains(err.Error(), token) {
		t.Errorf("Capture(closed server) = %v, want an error naming the URL without the token", err)
	}
}

func TestCaptureConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  CaptureConfig
		want string
	}{
		{"no company", CaptureConfig{APIBase: "http://localhost"}, "no company id"},
		{"not a URL", CaptureConfig{APIBase: "localhost:8080", Company: "acme"}, "want an http:// or https:// URL"},
		{"empty base", CaptureConfig{Company: "acme"}, "want an http:// or https:// URL"},
		{"credentials in URL", CaptureConfig{APIBase: "https://user:pw@os.example.com", Company: "acme"}, "not the URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Capture(context.Background(), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), ":pw@") {
				t.Errorf("Capture(%+v) = %v, want an error containing %q", tt.cfg, err, tt.want)
			}
		})
	}
}
