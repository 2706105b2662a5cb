package server

import (
	"encoding/json"
	"net/http"

	"github.com/assay-eval/assay/pkg/diag"
)

// Problem is an RFC 9457 problem detail; Diagnostics carries the positioned
// problems when input is at fault.
type Problem struct {
	Type        string    `json:"type"`
	Title       string    `json:"title"`
	Status      int       `json:"status"`
	Detail      string    `json:"detail,omitempty"`
	Diagnostics diag.List `json:"diagnostics,omitempty"`
}

// writeProblem writes a problem+json response.
func writeProblem(w http.ResponseWriter, status int, detail string, ds diag.List) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail, Diagnostics: ds})
}

// writeJSON writes v as a JSON response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
