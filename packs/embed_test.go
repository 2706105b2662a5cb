package packs

import (
	"encoding/json"
	"io/fs"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

func TestSchema(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatalf("Schema() is not JSON: %v", err)
	}
	if got, want := doc["$schema"], "https://json-schema.org/draft/2020-12/schema"; got != want {
		t.Errorf("Schema() $schema = %v, want %v", got, want)
	}
	s := Schema()
	s[0] = 'x'
	if Schema()[0] != '{' {
		t.Errorf("Schema() returned the embedded bytes, not a copy")
	}
}

func TestBundled(t *testing.T) {
	got, err := fs.Glob(Bundled(), "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"example.yaml", "release-engineering.yaml", "support-desk.yaml"}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("Bundled() = %v, want it to hold %s", got, w)
		}
	}
}

// TestReferencePacksCoverContract checks that every bundled pack other than
// the original example uses all six built-in scorers, slice tags, safety, CEL
// and every scoring field, so the packs stay a complete reference.
func TestReferencePacksCoverContract(t *testing.T) {
	scorers := []string{"answer_keywords", "composite", "memory_grounding", "stigmergic", "task_state", "tool_sequence"}
	scoring := []string{"kpi_weight", "max_error_rate", "max_mean_cost_usd", "max_mean_latency_s", "min_finalize_rate",
		"min_mean_score", "pareto_filter", "process_weight", "promotion"}
	promotion := []string{"require_no_regression", "rollback_on", "shadow_runs"}
	tests := []struct{ file string }{{"support-desk.yaml"}, {"release-engineering.yaml"}}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			src, err := fs.ReadFile(Bundled(), tc.file)
			if err != nil {
				t.Fatal(err)
			}
			var p struct {
				Tasks []struct {
					Scorer    string         `yaml:"scorer"`
					SliceTags []string       `yaml:"slice_tags"`
					Safety    map[string]any `yaml:"safety"`
					CEL       []any          `yaml:"cel"`
				} `yaml:"tasks"`
				Scoring map[string]any `yaml:"scoring"`
			}
			if err := yaml.Unmarshal(src, &p); err != nil {
				t.Fatalf("yaml.Unmarshal(%s) = %v", tc.file, err)
			}
			var used []string
			tags, safety, cel := false, false, false
			for _, task := range p.Tasks {
				if !slices.Contains(used, task.Scorer) {
					used = append(used, task.Scorer)
				}
				tags = tags || len(task.SliceTags) > 0
				safety = safety || len(task.Safety) > 0
				cel = cel || len(task.CEL) > 0
			}
			slices.Sort(used)
			if diff := cmp.Diff(scorers, used); diff != "" {
				t.Errorf("%s scorers (-want +got):\n%s", tc.file, diff)
			}
			if diff := cmp.Diff([]bool{true, true, true}, []bool{tags, safety, cel}); diff != "" {
				t.Errorf("%s uses [slice_tags safety cel] (-want +got):\n%s", tc.file, diff)
			}
			if diff := cmp.Diff(scoring, sortedKeys(p.Scoring)); diff != "" {
				t.Errorf("%s scoring fields (-want +got):\n%s", tc.file, diff)
			}
			prom, _ := p.Scoring["promotion"].(map[string]any)
			if diff := cmp.Diff(promotion, sortedKeys(prom)); diff != "" {
				t.Errorf("%s scoring.promotion fields (-want +got):\n%s", tc.file, diff)
			}
		})
	}
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
