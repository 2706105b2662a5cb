package pack

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/scorer"
)

func TestBundledPacksValidate(t *testing.T) {
	scorers := map[scorer.ID]bool{}
	for _, file := range bundledPacks {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p, list := Load(file, Options{Scorers: testCatalog()})
			if p == nil || len(list) > 0 {
				t.Fatalf("Load(%q) = %v, diagnostics:\n%s", file, p, list)
			}
			for _, task := range p.Tasks {
				scorers[task.Scorer] = true
				if len(task.SliceTags) == 0 {
					t.Errorf("Load(%q): task %s has no slice_tags", file, task.Label)
				}
			}
		})
	}
	if len(scorers) != 6 {
		t.Errorf("bundled packs use scorers %v, want all six", scorers)
	}
	for _, file := range bundledPacks[1:] {
		p, _ := Load(file, Options{})
		if p == nil {
			continue
		}
		s := p.Scoring
		if s.MaxMeanCostUSD == nil || s.MaxMeanLatencyS == nil || !s.ParetoFilter || s.Promotion.ShadowRuns == 0 ||
			len(s.Promotion.RollbackOn) == 0 || s.MinMeanScore == 0 || s.MinFinalizeRate == 0 {
			t.Errorf("Load(%q).Scoring = %+v, want every scoring field set", file, s)
		}
		var cel, safety, catalog int
		for _, task := range p.Tasks {
			cel += len(task.CEL)
			if task.Safety.MaxToolCalls != nil {
				safety++
			}
			catalog += len(task.ToolCatalog)
		}
		if cel == 0 || safety == 0 || len(p.ToolCatalog)+catalog == 0 {
			t.Errorf("Load(%q): %d CEL checks, %d safety blocks, tool catalogs %v; want some of each", file, cel, safety, p.ToolCatalog)
		}
	}
}

// seedTask is the example pack's task as an independent yaml.v3 decode sees it.
type seedTask struct {
	Label     string         `yaml:"label"`
	Persona   string         `yaml:"persona"`
	Prompt    string         `yaml:"prompt"`
	Scorer    string         `yaml:"scorer"`
	Weight    float64        `yaml:"weight"`
	SliceTags []string       `yaml:"slice_tags"`
	KPIs      map[string]any `yaml:"kpis"`
	Safety    *struct {
		RequiresHuman bool `yaml:"requires_human"`
		MaxToolCalls  *int `yaml:"max_tool_calls"`
	} `yaml:"safety"`
}

// TestExampleRoundTrip loads the bundled example pack (packs/example.yaml) and compares its task
// list with an independent decode of the same file.
func TestExampleRoundTrip(t *testing.T) {
	const file = "../../packs/example.yaml"
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, list := Load(file, Options{Scorers: testCatalog()})
	if p == nil {
		t.Fatalf("Load(%q) failed:\n%s", file, list)
	}
	var raw struct {
		Personas []string   `yaml:"personas"`
		Tasks    []seedTask `yaml:"tasks"`
	}
	if err := yaml.Unmarshal(src, &raw); err != nil {
		t.Fatal(err)
	}
	var want, got []seedTask
	for _, rt := range raw.Tasks {
		rt.KPIs = jsonRoundTrip(t, rt.KPIs)
		if rt.Safety == nil {
			rt.Safety = &struct {
				RequiresHuman bool `yaml:"requires_human"`
				MaxToolCalls  *int `yaml:"max_tool_calls"`
			}{}
		}
		want = append(want, rt)
	}
	for _, task := range p.Tasks {
		st := seedTask{Label: task.Label, Persona: task.Persona, Prompt: task.Prompt, Scorer: string(task.Scorer),
			Weight: task.Weight, SliceTags: task.SliceTags, KPIs: jsonRoundTrip(t, task.KPIs)}
		st.Safety = &struct {
			RequiresHuman bool `yaml:"requires_human"`
			MaxToolCalls  *int `yaml:"max_tool_calls"`
		}{task.Safety.RequiresHuman, task.Safety.MaxToolCalls}
		got = append(got, st)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load(%q) tasks differ from an independent decode (-want +got):\n%s", file, diff)
	}
	if diff := cmp.Diff(raw.Personas, p.Personas); diff != "" {
		t.Errorf("Load(%q).Personas (-want +got):\n%s", file, diff)
	}
	sum := sha256.Sum256(src)
	if p.SHA256 != hex.EncodeToString(sum[:]) || !bytes.Equal(p.Source, src) || p.Path != file {
		t.Errorf("Load(%q) = SHA256 %s, Path %q; want the file's hash and path", file, p.SHA256, p.Path)
	}
	wantScoring := Scoring{ProcessWeight: 0.35, KPIWeight: 0.65, MinMeanScore: 0.75, MinFinalizeRate: 1,
		MaxMeanLatencyS: ptr(90.0), ParetoFilter: true,
		Promotion: Promotion{RequireNoRegression: true, ShadowRuns: 3, RollbackOn: []string{"quality_drop", "finalize_drop", "safety_failure"}}}
	if diff := cmp.Diff(wantScoring, p.Scoring); diff != "" {
		t.Errorf("Load(%q).Scoring (-want +got):\n%s", file, diff)
	}
	if p.Company != (Company{ID: "0b1aeb33-4f4e-4c70-8d83-a66d087e24c5", Name: "Agentsys Engineering", APIBase: "http://127.0.0.1:3847"}) {
		t.Errorf("Load(%q).Company = %+v", file, p.Company)
	}
	if got, want := p.Tasks[0].Pos(), (diag.Pos{File: file, Line: 14, Col: 3}); got != want {
		t.Errorf("Load(%q).Tasks[0].Pos() = %v, want %v", file, got, want)
	}
	if _, got, _ := p.Tasks[0].KPIPos("priority_min"); got != (diag.Pos{File: file, Line: 26, Col: 21}) {
		t.Errorf("Load(%q) priority_min value at %v, want %v", file, got, diag.Pos{File: file, Line: 26, Col: 21})
	}
	if got, _, _ := p.Tasks[0].KPIPos("priority_min"); got != (diag.Pos{File: file, Line: 26, Col: 7}) {
		t.Errorf("Load(%q) priority_min key at %v, want %v", file, got, diag.Pos{File: file, Line: 26, Col: 7})
	}
}

func ptr[T any](v T) *T { return &v }

func jsonRoundTrip(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestHostileInput(t *testing.T) {
	t.Parallel()
	bomb := "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
	for i := 'b'; i <= 'z'; i++ {
		bomb += string(i) + ": &" + string(i) + " [" + strings.Repeat("*"+string(i-1)+",", 9) + "*" + string(i-1) + "]\n"
	}
	tests := []struct {
		name string
		src  []byte
		code string
		line int
	}{
		{"empty", nil, CodeEmpty, 1},
		{"blank", []byte("  \n\n\t\n"), CodeEmpty, 1},
		{"comments only", []byte("# nothing\n"), CodeEmpty, 1},
		{"not yaml", []byte("{{{{ ]]]"), CodeSyntax, 1},
		{"unclosed quote", []byte("company:\n  id: \"acme\n"), CodeSyntax, 2},
		{"tab indentation", []byte("company:\n\tid: acme\n"), CodeSyntax, 2},
		{"duplicate keys", []byte("company:\n  id: a\n  id: b\n"), CodeDuplicateKey, 3},
		{"duplicate key in an indexed mapping", []byte(func() string {
			var b strings.Builder
			for i := range 2 * indexFrom {
				fmt.Fprintf(&b, "k%d: %d\n", i, i)
			}
			return b.String() + "k3: again\n"
		}()), CodeDuplicateKey, 2*indexFrom + 1},
		{"non utf-8", []byte("company:\n  id: \xc3\x28\n"), CodeEncoding, 2},
		{"utf-16", []byte("\xff\xfec\x00o\x00"), CodeEncoding, 1},
		{"nul byte", []byte("company: \x00\n"), CodeEncoding, 1},
		{"bom in the middle", []byte("a: 1\n\ufeffb: 2\n"), CodeEncoding, 2},
		{"alias bomb", []byte(bomb), CodeAlias, 0},
		{"self alias", []byte("a: &a [1, *a]\n"), CodeSyntax, 1},
		{"multiple documents", []byte("a: 1\n---\nb: 2\n"), CodeSyntax, 2},
		{"document end then more", []byte("a: 1\n...\n---\nb: 2\n"), CodeSyntax, 3},
		{"deep nesting", []byte(strings.Repeat("[", 20000) + strings.Repeat("]", 20000)), CodeSyntax, 0},
		{"too large", bytes.Repeat([]byte("#"), MaxSize+1), CodeTooLarge, 1},
		{"scalar document", []byte("just words\n"), CodeType, 1},
		{"complex key", []byte("? [a, b]\n: 1\n"), CodeType, 1},
		{"huge integer", []byte("company:\n  id: 123456789012345678901234567890\n"), CodeType, 2},
		{"bad merge", []byte("company:\n  <<: 3\n  id: a\n"), CodeType, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, list := Parse("hostile.yaml", tc.src, Options{})
			if p != nil {
				t.Fatalf("Parse(%q) = a pack, want nil", tc.name)
			}
			var found *diag.Diagnostic
			for i, d := range list {
				if d.Code == tc.code {
					found = &list[i]
					break
				}
			}
			if found == nil {
				t.Fatalf("Parse(%q) = %v, want a %s diagnostic", tc.name, list, tc.code)
			}
			if found.Pos.File != "hostile.yaml" || found.Pos.Line < 1 || (tc.line > 0 && found.Pos.Line != tc.line) {
				t.Errorf("Parse(%q): %s at %v, want line %d of hostile.yaml", tc.name, tc.code, found.Pos, tc.line)
			}
		})
	}
}

func TestLoadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxSize + 1<<20); err != nil { // sparse: refused before reading
		t.Fatal(err)
	}
	f.Close()
	tests := []struct {
		name, path, code, msg string
	}{
		{"too large", big, CodeTooLarge, fmt.Sprintf("%.1f MiB", float64(MaxSize+1<<20)/(1<<20))},
		{"missing", filepath.Join(dir, "nope.yaml"), CodeIO, "no such file"},
		{"directory", dir, CodeIO, "directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, list := Load(tc.path, Options{})
			if p != nil || len(list) != 1 || list[0].Code != tc.code || !strings.Contains(list[0].Message, tc.msg) {
				t.Errorf("Load(%q) = %v, %v; want one %s mentioning %q", tc.path, p, list, tc.code, tc.msg)
			}
		})
	}
}

func TestDiagnosticsCapped(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("company:\n  id: a\n")
	for i := range 300 {
		b.WriteString("unknown_" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26) + ": 1\n")
	}
	_, list := Parse("many.yaml", []byte(b.String()), Options{})
	if len(list) != MaxDiagnostics+1 || list[MaxDiagnostics].Code != "diag.truncated" {
		t.Errorf("Parse(300 unknown keys) = %d diagnostics ending %v; want %d and a diag.truncated", len(list), list[len(list)-1], MaxDiagnostics+1)
	}
}

// recordingCheck is a Check that counts its calls and reports fixed
// diagnostics.
type recordingCheck struct {
	calls int
	out   diag.List
}

func (c *recordingCheck) CheckPack(p *Pack) diag.List {
	c.calls++
	return c.out
}

func TestChecks(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../packs/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	warn := diag.Warnf(diag.Pos{File: "x.yaml", Line: 3, Col: 1}, "kpi.cost", "expensive")
	fail := diag.Errorf(diag.Pos{File: "x.yaml", Line: 2, Col: 5}, "kpi.compile", "undeclared reference")
	tests := []struct {
		name      string
		src       []byte
		out       diag.List
		wantCalls int
		wantPack  bool
		wantDiags diag.List
	}{
		{"warning keeps the pack", src, diag.List{warn}, 1, true, diag.List{warn}},
		{"error drops the pack", src, diag.List{warn, fail}, 1, false, diag.List{fail, warn}},
		{"run on a pack with other errors", []byte("company: 1\n"), diag.List{fail}, 1, false, nil},
		{"not run on invalid YAML", []byte("company: [1\n"), diag.List{fail}, 0, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chk := &recordingCheck{out: tc.out}
			p, list := Parse("x.yaml", tc.src, Options{Checks: []Check{chk}})
			if chk.calls != tc.wantCalls || (p != nil) != tc.wantPack {
				t.Fatalf("Parse = pack %v, %d check calls; want pack %v, %d calls", p != nil, chk.calls, tc.wantPack, tc.wantCalls)
			}
			if tc.wantDiags != nil {
				if diff := cmp.Diff(tc.wantDiags, list); diff != "" {
					t.Errorf("Parse diagnostics (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestKPIRules(t *testing.T) {
	t.Parallel()
	const head = "company: {id: a}\npersonas: [p]\nscoring: {process_weight: 0.5, kpi_weight: 0.5}\ntasks:\n  - label: t\n    persona: p\n    prompt: x\n"
	noStigmergic := testCatalog()
	delete(noStigmergic, "stigmergic")
	tests := []struct {
		name    string
		task    string
		scorers map[scorer.ID]scorer.Description
		want    []string // "line:col code"
	}{
		{"declared keys", "    scorer: tool_sequence\n    kpis:\n      tool_args: {run: [suite]}\n      tool_sequence_exact: [a, b]\n", testCatalog(), nil},
		{"no catalog accepts any key", "    scorer: tool_sequence\n    kpis: {anything: 1}\n", nil, nil},
		{"key of another scorer", "    scorer: tool_sequence\n    kpis:\n      note_written: true\n", testCatalog(), []string{"10:7 pack.unknown_kpi"}},
		{"composite borrows keys", "    scorer: composite\n    kpis:\n      note_written: true\n      answer_keywords: [a]\n", testCatalog(), nil},
		{"composite without keys", "    scorer: composite\n", testCatalog(), []string{"8:13 pack.unknown_kpi"}},
		{"composite with unknown keys", "    scorer: composite\n    kpis:\n      x: 1\n", testCatalog(), []string{"9:5 pack.unknown_kpi", "10:7 pack.unknown_kpi"}},
		{"no installed plugin", "    scorer: stigmergic\n    kpis: {note_written: true}\n", noStigmergic, []string{"8:13 pack.unknown_scorer"}},
		{"bool wanted", "    scorer: stigmergic\n    kpis: {note_written: 1}\n", testCatalog(), []string{"9:26 pack.type"}},
		{"integer wanted", "    scorer: answer_keywords\n    kpis: {min_answer_length: 1.5}\n", testCatalog(), []string{"9:31 pack.type"}},
		{"integral float is an integer", "    scorer: answer_keywords\n    kpis: {min_answer_length: 10.0}\n", testCatalog(), nil},
		{"string wanted", "    scorer: task_state\n    kpis: {assigned_to: [p]}\n", testCatalog(), []string{"9:25 pack.type"}},
		{"string list item", "    scorer: task_state\n    kpis: {spec_keywords: [a, true]}\n", testCatalog(), []string{"9:31 pack.type"}},
		{"string list map", "    scorer: tool_sequence\n    kpis:\n      tool_args: {run: suite}\n", testCatalog(), []string{"10:24 pack.type"}},
		{"number wanted", "    scorer: task_state\n    kpis: {priority_min: high}\n", testCatalog(), []string{"9:26 pack.type"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.task
			_, list := Parse("k.yaml", []byte(src), Options{Scorers: tc.scorers})
			var got []string
			for _, d := range list {
				got = append(got, strings.TrimPrefix(d.Pos.String(), "k.yaml:")+" "+d.Code)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s\n%s", tc.name, diff, list.Render(map[string][]byte{"k.yaml": []byte(src)}))
			}
		})
	}
}

func TestCustomSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(path, embeddedSchemaBytes(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RewriteScorerEnum(path, []string{"acme_invoice", "answer_keywords"}); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSchema(path)
	if err != nil {
		t.Fatal(err)
	}
	src := []byte("company: {id: a}\npersonas: [p]\nscoring: {process_weight: 0.5, kpi_weight: 0.5}\ntasks:\n  - {label: t, persona: p, prompt: x, scorer: acme_invoice}\n")
	if p, list := Parse("c.yaml", src, Options{Schema: s}); p == nil {
		t.Errorf("Parse with schema %s = %v, want valid", path, list)
	}
	_, list := Parse("c.yaml", src, Options{})
	if len(list) != 1 || list[0].Code != CodeUnknownScore {
		t.Errorf("Parse with the embedded schema = %v, want one %s", list, CodeUnknownScore)
	}
	if !slices.Equal(s.ScorerEnum(), []string{"acme_invoice", "answer_keywords"}) || s.Source() != path {
		t.Errorf("LoadSchema(%q) = enum %v, source %q", path, s.ScorerEnum(), s.Source())
	}
}

// TestOneReportPerProblem checks a problem both the schema and the semantic
// rules see is reported once.
func TestOneReportPerProblem(t *testing.T) {
	t.Parallel()
	const head = "company: {id: a}\npersonas: [p]\n"
	const task = "tasks:\n  - {label: t, persona: p, prompt: x, scorer: answer_keywords}\n"
	const scoring = "scoring: {process_weight: 0.5, kpi_weight: 0.5}\n"
	tests := []struct {
		name, src, code string
	}{
		{"scorer of the wrong type", head + "tasks:\n  - {label: t, persona: p, prompt: x, scorer: 5}\n" + scoring, CodeType},
		{"schema_version of the wrong type", "schema_version: 1\n" + head + task + scoring, CodeType},
		{"unknown scorer", head + "tasks:\n  - {label: t, persona: p, prompt: x, scorer: nope}\n" + scoring, CodeUnknownScore},
		{"unknown key", head + task + scoring + "extra: 1\n", CodeUnknownKey},
		{"missing key", head + task, CodeRequired},
		{"weight out of range", head + task + "scoring: {process_weight: 2, kpi_weight: 0.5}\n", CodeWeights},
		{"zero task weight", head + "tasks:\n  - {label: t, persona: p, prompt: x, scorer: answer_keywords, weight: 0}\n" + scoring, CodeWeights},
		{"rate out of range", head + task + "scoring: {process_weight: 0.5, kpi_weight: 0.5, max_error_rate: -1}\n", CodeRange},
		{"duplicate persona", "company: {id: a}\npersonas: [p, p]\n" + task + scoring, CodeDuplicate},
		{"wrong type integer", head + task + "scoring: {process_weight: 0.5, kpi_weight: 0.5, promotion: {shadow_runs: 1.5}}\n", CodeType},
		{"tasks not a list", head + "tasks: {}\n" + scoring, CodeType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, list := Parse("one.yaml", []byte(tc.src), Options{})
			if len(list) != 1 || list[0].Code != tc.code {
				t.Errorf("Parse(%q) = %v, want exactly one %s", tc.name, list, tc.code)
			}
		})
	}
}

// TestOtherSchemaErrors checks a schema rule the loader has no code of its
// own for is still reported, as pack.schema, at the value it is about.
func TestOtherSchemaErrors(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "strict.json")
	schema := `{"type":"object","properties":{"tasks":{"items":{
		"properties":{"scorer":{"enum":["answer_keywords"]}},
		"not":{"required":["weight"]}}}}}`
	if err := os.WriteFile(path, []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSchema(path)
	if err != nil {
		t.Fatal(err)
	}
	src := "company: {id: a}\npersonas: [p]\nscoring: {process_weight: 0.5, kpi_weight: 0.5}\ntasks:\n" +
		"  - {label: t, persona: p, prompt: x, scorer: answer_keywords, weight: 2}\n"
	_, list := Parse("s.yaml", []byte(src), Options{Schema: s})
	want := diag.List{diag.Errorf(diag.Pos{File: "s.yaml", Line: 5, Col: 5}, CodeSchema, "tasks[0]: 'not' failed")}
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("Parse with schema %s (-want +got):\n%s", path, diff)
	}
}

// TestHostileSizesLinear guards against quadratic work on hostile packs: a
// huge mapping, and a minified one-line pack with many list items. Sixteen
// times the input must cost far less than 256 times the time, and the
// rendered diagnostics stay small however long the line.
func TestHostileSizesLinear(t *testing.T) {
	keys := func(n int) []byte {
		var b bytes.Buffer
		for i := range n {
			fmt.Fprintf(&b, "k%d: %d\n", i, i)
		}
		return b.Bytes()
	}
	oneLine := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString(`{"company": {"id": "a"}, "personas": ["ops"], "tasks": [`)
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `{"label": "t%d", "persona": "ops", "prompt": "%s", "scorer": "answer_keywords", "bogus": 1}`, i, strings.Repeat("x", 50))
		}
		b.WriteString(`], "scoring": {"process_weight": 0.5, "kpi_weight": 0.5}}`)
		return b.Bytes()
	}
	oneLineCEL := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString(`{"company": {"id": "a"}, "personas": ["ops"], "tasks": [`)
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `{"label": "t%d", "persona": "ops", "prompt": "%s", "scorer": "answer_keywords", "bogus": 1,`+
				` "cel": [{"name": "c", "expr": "size(turn.tool_calls) <= 8"}]}`, i, strings.Repeat("é", 50))
		}
		b.WriteString(`], "scoring": {"process_weight": 0.5, "kpi_weight": 0.5}}`)
		return b.Bytes()
	}
	tests := []struct {
		name       string
		gen        func(int) []byte
		small, big int
	}{
		{"top-level keys", keys, 2000, 32000},
		{"one-line pack with many tasks", oneLine, 500, 8000},
		{"one-line non-ASCII pack with CEL checks", oneLineCEL, 500, 8000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rendered int
			measure := func(src []byte) time.Duration {
				best := time.Duration(math.MaxInt64)
				for range 3 {
					start := time.Now()
					_, list := Parse("many.yaml", src, Options{})
					if d := time.Since(start); d < best {
						best = d
					}
					if got, want := len(list), MaxDiagnostics+1; got != want {
						t.Fatalf("Parse(%s, %d bytes) = %d diagnostics, want %d (capped, plus the truncation note)", tc.name, len(src), got, want)
					}
					rendered = len(list.Render(map[string][]byte{"many.yaml": src}))
				}
				return best
			}
			small, big := measure(tc.gen(tc.small)), measure(tc.gen(tc.big))
			if ratio := float64(big) / float64(small); ratio > 64 {
				t.Errorf("Parse(%s): %d items took %v, %d items %v: ratio %.0f, want <= 64 (linear is %d)",
					tc.name, tc.small, small, tc.big, big, ratio, tc.big/tc.small)
			}
			if max := (MaxDiagnostics + 1) * 3 * (diag.MaxExcerpt + 200); rendered > max {
				t.Errorf("Render(Parse(%s, %d items)) is %d bytes, want <= %d", tc.name, tc.big, rendered, max)
			}
		})
	}
}

// TestTaskSize: a pack's Task stays in the 192-byte size class, its
// positions out of it (docs/performance.md, fourteenth round): a run keeps
// every task of its pack.
func TestTaskSize(t *testing.T) {
	t.Parallel()
	if got := unsafe.Sizeof(Task{}); got > 192 {
		t.Errorf("Task is %d bytes, want at most 192", got)
	}
}
