package diag

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ciList() List {
	return List{
		Errorf(Pos{File: "packs/a,b.yaml", Line: 3, Col: 5}, "pack.unknown_key", "unknown key %q\nat 100%%", "foo"),
		Warnf(Pos{File: "packs/a,b.yaml", Line: 9, Col: 1}, "pack.weights", "weights sum to 0.9"),
		Errorf(Pos{File: "/abs/p.yaml"}, "pack.io", "cannot read"),
		Errorf(Pos{File: "packs/c.yaml", Line: 1, Col: 1}, "pack.unknown_key", "unknown key %q", "bar"),
	}
}

// TestGitHubAnnotations (issue 20 item 3): one workflow command a
// diagnostic, warnings as ::warning, data and properties escaped.
func TestGitHubAnnotations(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteGitHub(&buf, ciList()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`::error file=packs/a%2Cb.yaml,line=3,col=5,title=pack.unknown_key::unknown key "foo"%0Aat 100%25`,
		`::warning file=packs/a%2Cb.yaml,line=9,col=1,title=pack.weights::weights sum to 0.9`,
		`::error file=/abs/p.yaml,title=pack.io::cannot read`,
		`::error file=packs/c.yaml,line=1,col=1,title=pack.unknown_key::unknown key "bar"`,
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")); diff != "" {
		t.Errorf("WriteGitHub (-want +got):\n%s", diff)
	}
}

// TestSARIFRulesAndLocations (issue 20 item 3): SARIF 2.1.0 with one rule
// per code, one result per diagnostic pointing at its rule and location.
func TestSARIFRulesAndLocations(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, SARIFTool{Name: "assay", Version: "v1"}, ciList()); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region *struct {
							StartLine   int `json:"startLine"`
							StartColumn int `json:"startColumn"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil || string(raw["$schema"]) == "" {
		t.Fatalf("not a SARIF log with $schema: %v", err)
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name != "assay" {
		t.Fatalf("log = %+v", log)
	}
	run := log.Runs[0]
	var rules []string
	for _, r := range run.Tool.Driver.Rules {
		rules = append(rules, r.ID)
	}
	if diff := cmp.Diff([]string{"pack.io", "pack.unknown_key", "pack.weights"}, rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	type res struct {
		Rule, Level, URI string
		Line, Col        int
	}
	var got []res
	for _, r := range run.Results {
		if rules[r.RuleIndex] != r.RuleID {
			t.Errorf("result %s has ruleIndex %d (%s)", r.RuleID, r.RuleIndex, rules[r.RuleIndex])
		}
		g := res{Rule: r.RuleID, Level: r.Level}
		if len(r.Locations) == 1 {
			pl := r.Locations[0].PhysicalLocation
			g.URI = pl.ArtifactLocation.URI
			if pl.Region != nil {
				g.Line, g.Col = pl.Region.StartLine, pl.Region.StartColumn
			}
		}
		got = append(got, g)
	}
	want := []res{
		{"pack.unknown_key", "error", "packs/a,b.yaml", 3, 5},
		{"pack.weights", "warning", "packs/a,b.yaml", 9, 1},
		{"pack.io", "error", "file:///abs/p.yaml", 0, 0},
		{"pack.unknown_key", "error", "packs/c.yaml", 1, 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}
