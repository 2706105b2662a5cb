package server

import (
	"errors"
	"io"
	"net/http"
	"regexp"
	"time"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/pkg/diag"
)

// packName is what a pack may be called in a URL.
var packName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// codeCompany is the diagnostic of a pack whose company.id is not the
// token's company.
const codeCompany = "serve.company"

type packInfo struct {
	Name        string    `json:"name"`
	SHA256      string    `json:"sha256"`
	Tasks       int       `json:"tasks,omitempty"`
	UpdatedAt   time.Time `json:"updated_at,omitzero"`
	Diagnostics diag.List `json:"diagnostics,omitempty"`
}

func (s *Server) putPack(w http.ResponseWriter, r *http.Request) {
	tok := tokenOf(r)
	name := r.PathValue("name")
	if !packName.MatchString(name) {
		writeProblem(w, http.StatusBadRequest, "pack name "+name+": want letters, digits, '.', '_' or '-'", nil)
		return
	}
	src, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.BodyLimit))
	if err != nil {
		s.bodyError(w, err)
		return
	}
	file := name + ".yaml"
	p, ds := s.cfg.Verifier.LoadPack(file, src)
	if p != nil && p.Company.ID != tok.Company {
		ds = append(ds, diag.Errorf(diag.Pos{File: file, Line: 1, Col: 1}, codeCompany,
			"company.id %q is not this token's company %q", p.Company.ID, tok.Company))
	}
	if ds.HasErrors() || p == nil {
		writeProblem(w, http.StatusUnprocessableEntity, "pack "+name+" is not valid", ds)
		return
	}
	if err := s.cfg.Store.PutServerPack(r.Context(), store.ServerPack{Company: tok.Company, Name: name, SHA256: p.SHA256, Source: src}); err != nil {
		s.internal(w, err)
		return
	}
	s.log.Info("pack stored", logCompany, tok.Company, logPack, name)
	writeJSON(w, http.StatusOK, packInfo{Name: name, SHA256: p.SHA256, Tasks: len(p.Tasks), Diagnostics: ds})
}

func (s *Server) listPacks(w http.ResponseWriter, r *http.Request) {
	ps, err := s.cfg.Store.ServerPacks(r.Context(), tokenOf(r).Company)
	if err != nil {
		s.internal(w, err)
		return
	}
	out := make([]packInfo, len(ps))
	for i, p := range ps {
		out[i] = packInfo{Name: p.Name, SHA256: p.SHA256, UpdatedAt: p.UpdatedAt}
	}
	writeJSON(w, http.StatusOK, map[string]any{"packs": out})
}

// bodyError answers a request body that could not be read: 413 past the
// cap, else 400.
func (s *Server) bodyError(w http.ResponseWriter, err error) {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		writeProblem(w, http.StatusRequestEntityTooLarge, "request body larger than the server's limit of "+byteCount(mb.Limit), nil)
		return
	}
	writeProblem(w, http.StatusBadRequest, "reading the request body: "+err.Error(), nil)
}

// internal answers 500 and logs err.
func (s *Server) internal(w http.ResponseWriter, err error) {
	s.log.Error("internal error", logErr, err)
	writeProblem(w, http.StatusInternalServerError, "the server failed; see its log", nil)
}
