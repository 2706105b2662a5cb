package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/assay-eval/assay/pkg/trace"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// fixtures is the fixture set shared with the README and the host's tests.
var fixtures = filepath.Join("..", "..", "testdata", "fixtures")

// fixturePack is the part of the fixture pack the scorers see.
type fixturePack struct {
	ToolCatalog []string      `yaml:"tool_catalog"`
	Tasks       []fixtureTask `yaml:"tasks"`
}

// fixtureTask is one task of the fixture pack.
type fixtureTask struct {
	Label       string         `yaml:"label"`
	Persona     string         `yaml:"persona"`
	Prompt      string         `yaml:"prompt"`
	Scorer      sdk.ID         `yaml:"scorer"`
	KPIs        map[string]any `yaml:"kpis"`
	ToolCatalog []string       `yaml:"tool_catalog"`
}

func loadFixturePack(t *testing.T) fixturePack {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, "pack.yaml"))
	if err != nil {
		t.Fatalf("reading fixture pack: %v", err)
	}
	var p fixturePack
	if err := yaml.Unmarshal(b, &p); err != nil {
		t.Fatalf("decoding fixture pack: %v", err)
	}
	return p
}

// loadSnapshot reads a state snapshot; a missing file is a nil snapshot.
func loadSnapshot(t *testing.T, name string) *sdk.Snapshot {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, "state", name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading snapshot: %v", err)
	}
	var s sdk.Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("decoding snapshot %s: %v", name, err)
	}
	return &s
}

// fixtureCase is the case of task's good or bad (variant) fixture turn.
func fixtureCase(t *testing.T, p fixturePack, task fixtureTask, variant string) *sdk.Case {
	t.Helper()
	turn, diags, err := trace.ParseFile(filepath.Join(fixtures, "traces", task.Label+"."+variant+".ndjson"))
	if err != nil {
		t.Fatalf("parsing trace: %v", err)
	}
	if len(diags) > 0 {
		t.Errorf("trace warnings: %v", diags)
	}
	kpis := map[string]json.RawMessage{}
	for k, v := range task.KPIs {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("encoding kpi %s: %v", k, err)
		}
		kpis[k] = b
	}
	return &sdk.Case{
		ID: task.Label + "." + variant,
		Task: sdk.Task{Label: task.Label, Persona: task.Persona, Prompt: task.Prompt, KPIs: kpis,
			ToolCatalog: append(slices.Clone(p.ToolCatalog), task.ToolCatalog...)},
		Turn:        *turn,
		StateBefore: loadSnapshot(t, task.Label+".before.json"),
		StateAfter:  loadSnapshot(t, task.Label+"."+variant+".after.json"),
	}
}

// scoreCase scores c with the scorer named id the way the host does: each
// scorer sees only the parts it declares, and composite first gets the
// results of every other scorer that declares one of the task's KPI keys.
func scoreCase(t *testing.T, id sdk.ID, c *sdk.Case) *sdk.Result {
	t.Helper()
	ctx := context.Background()
	byID := map[sdk.ID]sdk.Scorer{}
	for _, s := range Scorers() {
		byID[s.Describe().ID] = s
	}
	s, ok := byID[id]
	if !ok {
		t.Fatalf("fixture task uses scorer %q, which is not built in", id)
	}
	d := s.Describe()
	if d.NeedsPart(sdk.NeedUpstream) {
		for _, other := range Scorers() {
			od := other.Describe()
			if od.ID == id || !slices.ContainsFunc(slices.Collect(maps.Keys(c.Task.KPIs)), od.Declares) {
				continue
			}
			r, err := other.Score(ctx, scorerpb.StripCase(od, c))
			if err != nil {
				t.Fatalf("upstream %s: %v", od.ID, err)
			}
			c.Upstream = append(c.Upstream, sdk.Upstream{Scorer: od.ID, Result: *r})
		}
	}
	r, err := s.Score(ctx, scorerpb.StripCase(d, c))
	if err != nil {
		t.Fatalf("Score(%s) error = %v", id, err)
	}
	return r
}

// checks renders r's checks for a failure message.
func checks(r *sdk.Result) string {
	var b strings.Builder
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "  %s %.3f %s\n", c.KPI, c.Score, c.Detail)
	}
	return b.String()
}

// TestFixtures scores every fixture turn with the built-in scorers: each
// good turn scores 1, each bad turn scores what its table row says and
// carries its failure tags.
func TestFixtures(t *testing.T) {
	t.Parallel()
	type want struct {
		score float64
		tags  []string
	}
	// A good turn passes every check; a bad one scores low, for the reasons
	// README.md gives.
	wants := map[string]want{
		"task_create_release_blocker.bad": {score: (1 + 0.25) / 6, tags: []string{"state_not_changed"}},
		"memory_grounded_recent_work.bad": {score: 0, tags: []string{"ungrounded_answer"}},
		"validate_delivery_sequence.bad":  {score: (0.5 + 0 + 0 + 0) / 4, tags: []string{"tool_missing", "tool_wrong_args"}},
		"handoff_note_release.bad":        {score: 0, tags: []string{"state_not_changed"}},
		"release_status_summary.bad":      {score: (0 + 11.0/80) / 2},
		// composite: the mean of memory_grounding (answer_keywords 0),
		// tool_sequence (0) and answer_keywords ((0 + 27/80) / 2).
		"validate_delivery_tools.bad": {score: (0 + 0 + (0+27.0/80)/2) / 3, tags: []string{"tool_missing"}},
	}
	p := loadFixturePack(t)
	if len(p.Tasks) != 6 {
		t.Fatalf("fixture pack has %d tasks, want one per built-in scorer (6)", len(p.Tasks))
	}
	var used []sdk.ID
	for _, task := range p.Tasks {
		used = append(used, task.Scorer)
		for _, variant := range []string{"good", "bad"} {
			t.Run(task.Label+"/"+variant, func(t *testing.T) {
				c := fixtureCase(t, p, task, variant)
				r := scoreCase(t, task.Scorer, c)
				w, ok := wants[c.ID]
				if !ok {
					w = want{score: 1}
				}
				if math.Abs(r.Score-w.score) > 1e-9 || !slices.Equal(r.FailureTags, w.tags) {
					t.Errorf("Score(%s) = %v %q, want %v %q; checks:\n%s", c.ID, r.Score, r.FailureTags, w.score, w.tags, checks(r))
				}
				if variant == "bad" && r.Score > 0.25 {
					t.Errorf("Score(%s) = %v, want a bad turn to score at most 0.25", c.ID, r.Score)
				}
				if len(r.Diagnostics) > 0 {
					t.Errorf("Score(%s) diagnostics = %q, want none", c.ID, r.Diagnostics)
				}
				for _, ch := range r.Checks {
					if !ch.Passed && ch.Detail == "" {
						t.Errorf("Score(%s) check %s failed without a detail", c.ID, ch.KPI)
					}
				}
			})
		}
	}
	slices.Sort(used)
	var all []sdk.ID
	for _, s := range Scorers() {
		all = append(all, s.Describe().ID)
	}
	slices.Sort(all)
	if !slices.Equal(used, all) {
		t.Errorf("fixture pack uses scorers %v, want each of %v", used, all)
	}
}
