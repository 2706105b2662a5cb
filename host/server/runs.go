package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/assay-eval/assay/host/governance"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
	"github.com/assay-eval/assay/pkg/diag"
)

// runView is GET /v1/runs/{id}.
type runView struct {
	RunID     int64     `json:"run_id"`
	Pack      string    `json:"pack"`
	Candidate string    `json:"candidate,omitempty"`
	Status    string    `json:"status"`
	Progress  progress  `json:"progress"`
	Counts    *counts   `json:"counts,omitempty"`
	Error     string    `json:"error,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

type progress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// counts are a completed run's totals over its candidates.
type counts struct {
	Candidates      int `json:"candidates"`
	Turns           int `json:"turns"`
	Unscored        int `json:"unscored"`
	Missing         int `json:"missing"`
	UnreadableTurns int `json:"unreadable_turns"`
	NotVerified     int `json:"not_verified"`
	// Ignored counts the turns whose label is not a task of the pack, and
	// InputWarnings the input's warnings (the summary lists them).
	Ignored       int `json:"ignored"`
	InputWarnings int `json:"input_warnings"`
	// ScoredOnRetry counts the turns scored only on a retry (the
	// summary's scored_on_retry_labels name them).
	ScoredOnRetry int `json:"scored_on_retry"`
}

func (s *Server) postRun(w http.ResponseWriter, r *http.Request) {
	tok := tokenOf(r)
	q := r.URL.Query()
	p, err := s.cfg.Store.ServerPack(r.Context(), tok.Company, q.Get("pack"))
	if errors.Is(err, store.ErrNotFound) {
		writeProblem(w, http.StatusNotFound, fmt.Sprintf("no pack %q", q.Get("pack")), nil)
		return
	} else if err != nil {
		s.internal(w, err)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if key != "" {
		if prev, err := s.cfg.Store.UploadByKey(r.Context(), tok.ID, key); err == nil {
			_, _ = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, s.cfg.BodyLimit))
			s.accepted(w, prev, true)
			return
		}
	}
	if !s.acquire(tok.ID) {
		w.Header().Set("Retry-After", "5")
		writeProblem(w, http.StatusTooManyRequests, fmt.Sprintf("this token already has %d runs queued or running", s.cfg.RunsPerToken), nil)
		return
	}
	path, err := s.spool(w, r)
	if err != nil {
		s.release(tok.ID)
		s.bodyError(w, err)
		return
	}
	u, created, err := s.cfg.Store.CreateUpload(r.Context(), store.Upload{Company: tok.Company, TokenID: tok.ID,
		PackName: p.Name, PackSHA256: p.SHA256, Candidate: q.Get("candidate"), IdempotencyKey: key})
	if err != nil || !created {
		os.Remove(path)
		s.release(tok.ID)
		if err != nil {
			s.internal(w, err)
			return
		}
		s.accepted(w, u, true)
		return
	}
	s.log.Info("run queued", logRun, u.ID, logCompany, tok.Company, logPack, p.Name)
	s.jobs.Add(1)
	go s.verify(u, p, path)
	s.accepted(w, u, false)
}

// accepted answers an upload; reused says the Idempotency-Key named an
// earlier upload, whose run this is (the body was read and dropped).
func (s *Server) accepted(w http.ResponseWriter, u store.Upload, reused bool) {
	w.Header().Set("Location", "/v1/runs/"+strconv.FormatInt(u.ID, 10))
	writeJSON(w, http.StatusAccepted, map[string]any{"run_id": u.ID, "status": u.Status, "reused": reused})
}

// spool streams the request body to a temporary file (never holding it in
// memory): the engine reads a turns file by offset as it scores.
func (s *Server) spool(w http.ResponseWriter, r *http.Request) (string, error) {
	f, err := os.CreateTemp(s.cfg.TempDir, "assay-upload-*.jsonl")
	if err != nil {
		return "", fmt.Errorf("spooling the upload: %w", err)
	}
	_, err = io.Copy(f, http.MaxBytesReader(w, r.Body, s.cfg.BodyLimit))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func (s *Server) acquire(token int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active[token] >= s.cfg.RunsPerToken {
		return false
	}
	s.active[token]++
	return true
}

func (s *Server) release(token int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active[token]--; s.active[token] <= 0 {
		delete(s.active, token)
	}
}

// verify runs one upload on verify.Run, as `assay verify --turns` would.
func (s *Server) verify(u store.Upload, p store.ServerPack, path string) {
	defer s.jobs.Done()
	defer s.release(u.TokenID)
	defer os.Remove(path)
	ctx := s.ctx
	sum, err := s.run(ctx, &u, p, path)
	status, msg := store.UploadCompleted, ""
	if err != nil {
		// The spool file is the server's business: name it as the upload.
		status, msg = store.UploadFailed, strings.ReplaceAll(err.Error(), path, uploadName)
		if errors.Is(err, context.Canceled) {
			msg = "interrupted by server shutdown; upload the same turns again to resume (recorded turns are reused): " + msg
		}
		s.log.Warn("run failed", logRun, u.ID, logErr, err)
	}
	// A fresh context: the verification's may be cancelled, the record must land.
	rec, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.cfg.Store.UpdateUpload(rec, u.ID, status, u.Turns, u.Done, sum, msg); err != nil {
		s.log.Error("recording run", logRun, u.ID, logErr, err)
	}
}

func (s *Server) run(ctx context.Context, u *store.Upload, sp store.ServerPack, path string) ([]byte, error) {
	cfg, start, err := s.cfg.Verifier.Engine(sp.Name+".yaml", sp.Source)
	if err != nil {
		return nil, err
	}
	cfg.Store = s.cfg.Store // the runs and turns go where the API reads them
	var mu sync.Mutex
	last := time.Time{}
	cfg.Progress = func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		u.Done, u.Turns = done, total
		if time.Since(last) > 500*time.Millisecond || done == total {
			last = time.Now()
			_ = s.cfg.Store.UpdateUpload(ctx, u.ID, store.UploadRunning, total, done, nil, "")
		}
	}
	if err := s.cfg.Store.UpdateUpload(ctx, u.ID, store.UploadRunning, 0, 0, nil, ""); err != nil {
		return nil, err
	}
	candidate := u.Candidate
	if candidate == "" {
		candidate = strings.TrimSuffix(uploadName, ".jsonl") // not the spool file's random name
	}
	var diags diag.List
	rep, err := verify.Run(ctx, verify.Request{Engine: cfg, TurnsFile: path, Candidate: candidate, Start: start,
		Diagnostics: func(ds diag.List) { diags = append(diags, ds.Errors()...) },
		Govern:      governance.AfterVerify(cfg.Store, cfg.Pack)})
	if err != nil {
		if len(diags) > 0 {
			return nil, fmt.Errorf("%w: %w", err, diags)
		}
		return nil, err
	}
	return json.Marshal(rep)
}

// uploadOf reads the {id} upload of the token's company; another company's
// is 404 like an unknown one.
func (s *Server) uploadOf(w http.ResponseWriter, r *http.Request) (store.Upload, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		writeProblem(w, http.StatusNotFound, "no run "+r.PathValue("id"), nil)
		return store.Upload{}, false
	}
	u, err := s.cfg.Store.UploadOf(r.Context(), tokenOf(r).Company, id)
	if errors.Is(err, store.ErrNotFound) {
		writeProblem(w, http.StatusNotFound, "no run "+r.PathValue("id"), nil)
		return store.Upload{}, false
	} else if err != nil {
		s.internal(w, err)
		return store.Upload{}, false
	}
	return u, true
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	u, ok := s.uploadOf(w, r)
	if !ok {
		return
	}
	v := runView{RunID: u.ID, Pack: u.PackName, Candidate: u.Candidate, Status: u.Status,
		Progress: progress{Done: u.Done, Total: u.Turns}, Error: u.Error, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
	if u.Summary != nil {
		var rep verify.Report
		if err := json.Unmarshal(u.Summary, &rep); err == nil {
			c := &counts{Candidates: len(rep.Candidates), UnreadableTurns: rep.UnreadableTurns, NotVerified: len(rep.Errors),
				InputWarnings: len(rep.InputWarnings) + rep.InputWarningsOmitted}
			for _, cr := range rep.Candidates {
				c.Ignored += cr.Ignored
				c.ScoredOnRetry += cr.ScoredOnRetry
				c.Turns += cr.Summary.N
				c.Unscored += cr.Summary.Unscored
				c.Missing += cr.Summary.Missing
			}
			v.Counts = c
		}
	}
	writeJSON(w, http.StatusOK, v)
}

// completedUpload is uploadOf for what exists only once the run has
// completed (what: "summary exists", "results exist"): 409 before then.
func (s *Server) completedUpload(w http.ResponseWriter, r *http.Request, what string) (store.Upload, bool) {
	u, ok := s.uploadOf(w, r)
	if !ok {
		return u, false
	}
	if u.Summary == nil {
		writeProblem(w, http.StatusConflict, fmt.Sprintf("run %d is %s; its %s once it has completed", u.ID, u.Status, what), nil)
		return u, false
	}
	return u, true
}

func (s *Server) getSummary(w http.ResponseWriter, r *http.Request) {
	u, ok := s.completedUpload(w, r, "summary exists")
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(u.Summary)
}

// uploadName names an upload's turns file in messages.
const uploadName = "upload.jsonl"

// resultsPage is how many turns GET /v1/runs/{id}/results reads at a time.
const resultsPage = 500

func (s *Server) getResults(w http.ResponseWriter, r *http.Request) {
	u, ok := s.completedUpload(w, r, "results exist")
	if !ok {
		return
	}
	var rep verify.Report
	if err := json.Unmarshal(u.Summary, &rep); err != nil {
		s.internal(w, fmt.Errorf("reading the summary of run %d: %w", u.ID, err))
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	for _, c := range rep.Candidates {
		for after := ""; ; {
			rows, err := s.cfg.Store.TurnPage(r.Context(), c.RunID, store.TurnFilter{After: after}, resultsPage)
			if err != nil {
				s.log.Error("streaming results", logRun, u.ID, logErr, err)
				_ = json.NewEncoder(w).Encode(map[string]string{"error": "results truncated: the server failed reading them"})
				return
			}
			for _, t := range rows {
				_, _ = w.Write(append(t.Result, '\n'))
				after = t.Label
			}
			if len(rows) < resultsPage {
				break
			}
		}
	}
}

// byteCount prints n bytes in MiB when whole.
func byteCount(n int64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
