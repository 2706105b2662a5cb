package diag

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
)

// SARIF 2.1.0, the parts assay writes (docs/ci.md).
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool    sarifTool     `json:"tool"`
		Results []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version,omitempty"`
		InformationURI string      `json:"informationUri,omitempty"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID               string       `json:"id"`
		ShortDescription sarifMessage `json:"shortDescription"`
		HelpURI          string       `json:"helpUri,omitempty"`
	}
	sarifMessage struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID    string          `json:"ruleId"`
		RuleIndex int             `json:"ruleIndex"`
		Level     string          `json:"level"`
		Message   sarifMessage    `json:"message"`
		Locations []sarifLocation `json:"locations,omitempty"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical `json:"physicalLocation"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           *sarifRegion  `json:"region,omitempty"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn,omitempty"`
	}
)

// SARIFTool names the tool in a SARIF log.
type SARIFTool struct {
	Name, Version, InformationURI string
	// HelpURI, when set, is each rule's help page.
	HelpURI string
}

// WriteSARIF writes l as a SARIF 2.1.0 log with one run: one rule per
// diagnostic code (sorted), one result per diagnostic, located at its file
// (a relative URI, or file:// for an absolute path) and line and column
// when known.
func WriteSARIF(w io.Writer, tool SARIFTool, l List) error {
	codes := map[string]int{}
	for _, d := range l {
		codes[d.Code] = 0
	}
	ids := make([]string, 0, len(codes))
	for c := range codes {
		ids = append(ids, c)
	}
	sort.Strings(ids)
	driver := sarifDriver{Name: tool.Name, Version: tool.Version, InformationURI: tool.InformationURI, Rules: []sarifRule{}}
	for i, id := range ids {
		codes[id] = i
		driver.Rules = append(driver.Rules, sarifRule{ID: id, ShortDescription: sarifMessage{Text: "assay diagnostic " + id}, HelpURI: tool.HelpURI})
	}
	run := sarifRun{Tool: sarifTool{Driver: driver}, Results: []sarifResult{}}
	for _, d := range l {
		r := sarifResult{RuleID: d.Code, RuleIndex: codes[d.Code], Level: "error", Message: sarifMessage{Text: d.Message}}
		if d.Severity == Warning {
			r.Level = "warning"
		}
		if d.Pos.File != "" {
			loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: fileURI(d.Pos.File)}}}
			if d.Pos.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: d.Pos.Line, StartColumn: d.Pos.Col}
			}
			r.Locations = []sarifLocation{loc}
		}
		run.Results = append(run.Results, r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	doc := sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}}
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing SARIF: %w", err)
	}
	return nil
}

// fileURI is path as a URI reference: relative paths stay relative (to the
// repository root when assay runs there), absolute ones are file:// URIs.
func fileURI(path string) string {
	p := filepath.ToSlash(path)
	if filepath.IsAbs(path) {
		if !strings.HasPrefix(p, "/") {
			p = "/" + p // a Windows drive path
		}
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}
