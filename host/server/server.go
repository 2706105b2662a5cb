package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
	"github.com/assay-eval/assay/pkg/diag"
)

// Defaults of Config.
const (
	DefaultBodyLimit    = 256 << 20
	DefaultRunsPerToken = 2
)

// Verifier is what the server verifies with; `assay serve` builds it from
// the same session as `assay verify`.
type Verifier interface {
	// LoadPack validates a pack's YAML exactly as `assay pack validate`.
	LoadPack(file string, src []byte) (*pack.Pack, diag.List)
	// Engine loads the pack the same way and returns the engine
	// configuration for it and the function that starts its scorers
	// before any turn is scored.
	Engine(file string, src []byte) (verify.Config, func(context.Context) error, error)
}

// Config configures a Server.
type Config struct {
	Store    *store.Store
	Verifier Verifier
	Logger   hclog.Logger
	// BodyLimit caps a request body in bytes; zero is DefaultBodyLimit.
	BodyLimit int64
	// RunsPerToken bounds a token's queued and running uploads; zero is
	// DefaultRunsPerToken.
	RunsPerToken int
	// Ready is /readyz's check (the three places and the database); nil
	// checks only the database.
	Ready func(context.Context) error
	// TempDir holds uploads while they are verified; "" is os.TempDir().
	TempDir string
	// Cockpit, when set, serves every path outside /v1 and the health checks.
	Cockpit http.Handler
}

// Server is the HTTP API.
type Server struct {
	cfg    Config
	log    hclog.Logger
	ctx    context.Context // cancelled when Shutdown's deadline passes
	cancel context.CancelFunc
	jobs   sync.WaitGroup

	mu     sync.Mutex
	active map[int64]int // token id -> queued and running uploads
}

// New returns a Server for cfg.
func New(cfg Config) *Server {
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = DefaultBodyLimit
	}
	if cfg.RunsPerToken <= 0 {
		cfg.RunsPerToken = DefaultRunsPerToken
	}
	if cfg.TempDir == "" {
		cfg.TempDir = os.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{cfg: cfg, log: cfg.Logger, ctx: ctx, cancel: cancel, active: map[int64]int{}}
}

// Handler is the server's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.HandleFunc("PUT /v1/packs/{name}", s.requireToken(s.putPack))
	mux.HandleFunc("GET /v1/packs", s.requireToken(s.listPacks))
	mux.HandleFunc("POST /v1/runs", s.requireToken(s.postRun))
	mux.HandleFunc("GET /v1/runs/{id}", s.requireToken(s.getRun))
	mux.HandleFunc("GET /v1/runs/{id}/summary", s.requireToken(s.getSummary))
	mux.HandleFunc("GET /v1/runs/{id}/results", s.requireToken(s.getResults))
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path, nil)
	})
	if s.cfg.Cockpit != nil {
		mux.Handle("/", s.cfg.Cockpit)
	}
	return s.logged(mux)
}

// logged logs every request at debug level and every 5xx as an error.
func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		if sw.status >= 500 {
			s.log.Error("request failed", "method", r.Method, logPath, r.URL.Path, logStatus, sw.status)
		} else {
			s.log.Debug("request", "method", r.Method, logPath, r.URL.Path, logStatus, sw.status)
		}
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	err := s.cfg.Store.DB().PingContext(r.Context())
	if err == nil && s.cfg.Ready != nil {
		err = s.cfg.Ready(r.Context())
	}
	if err != nil {
		writeProblem(w, http.StatusServiceUnavailable, fmt.Sprintf("not ready: %v", err), nil)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// Shutdown waits for in-flight verifications until ctx ends, then cancels
// them: their recorded turns stay stored, and uploading the same turns
// again resumes (docs/serve.md). Stop the http.Server first.
func (s *Server) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.jobs.Wait(); close(done) }()
	select {
	case <-done:
		s.cancel()
		return nil
	case <-ctx.Done():
		s.cancel()
		<-done
		return fmt.Errorf("shutting down: verifications interrupted (resumable): %w", ctx.Err())
	}
}
