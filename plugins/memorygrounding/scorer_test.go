package memorygrounding

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/plugins/internal/gradetest"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/sdktest"
)

type check = gradetest.Check

const tag = "ungrounded_answer"

var memory = []sdk.MemoryEntry{
	{ID: "m-1", Title: "Lunch menu", Body: "Pizza on Friday."},
	{ID: "m-2", Title: "Harness work", Body: "We rebuilt the meta harness trace parser and the frontier ranking.", Tags: []string{"eval"}},
	{ID: "m-3", Title: "Release", Body: "The release pipeline blocker was a flaky integration test.", SummaryL0: "release blocker"},
	{ID: "m-4", Title: "Stop words", Body: "They were about there with which would have been their other."},
}

type input struct {
	kpis    map[string]any
	answer  string
	tools   []string
	memory  []sdk.MemoryEntry
	noAfter bool
}

func newCase(t testing.TB, in input) *sdk.Case {
	t.Helper()
	c := &sdk.Case{ID: "c", Task: sdk.Task{Label: "memory_grounded_recent_work", KPIs: gradetest.KPIs(t, in.kpis)}, Turn: sdk.Turn{Answer: in.answer}}
	for _, name := range in.tools {
		c.Turn.ToolCalls = append(c.Turn.ToolCalls, sdk.ToolCall{Name: name, Args: map[string]any{}})
	}
	if !in.noAfter {
		c.StateAfter = &sdk.Snapshot{Memory: in.memory}
	}
	return c
}

func TestScore(t *testing.T) {
	t.Parallel()
	grounded := map[string]any{"grounded_in_memory": true}
	tests := []struct {
		name string
		in   input
		want gradetest.Want
	}{
		{
			name: "memory tool called",
			in:   input{kpis: map[string]any{"memory_tool_called": true}, tools: []string{"search", "company_Memory_search", "company_Memory_search"}},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "memory_tool_called", Score: 1, Passed: true, Detail: "memory tools called: company_Memory_search"}}},
		},
		{
			name: "memory_tools names more tools",
			in:   input{kpis: map[string]any{"memory_tool_called": true, "memory_tools": []string{"Recall"}}, tools: []string{"recall"}},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "memory_tool_called", Score: 1, Passed: true}}},
		},
		{
			name: "no memory tool called",
			in:   input{kpis: map[string]any{"memory_tool_called": true, "memory_tools": []string{"recall"}}, tools: []string{"search"}},
			want: gradetest.Want{Tags: []string{tag}, Checks: []check{{KPI: "memory_tool_called", Tag: tag,
				Detail: `no memory tool called (1 tool call); want a tool whose name contains "memory" or one of recall`}}},
		},
		{
			name: "memory tool called, want none",
			in:   input{kpis: map[string]any{"memory_tool_called": false}, tools: []string{"memory_search"}},
			want: gradetest.Want{Tags: []string{tag}, Checks: []check{{KPI: "memory_tool_called", Tag: tag, Detail: "want none"}}},
		},
		{
			name: "grounded in the best entry",
			in:   input{kpis: grounded, answer: "Recently: the HARNESS trace parser was rebuilt, and frontier ranking too.", memory: memory},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "grounded_in_memory", Score: 1, Passed: true,
				Detail: "the answer shares 6 content words with memory entry 'Harness work' (m-2) (harness, trace, parser, rebuilt, frontier, ranking), want >= 3"}}},
		},
		{
			name: "partial credit: two of three words",
			in:   input{kpis: grounded, answer: "The release had a blocker.", memory: memory},
			want: gradetest.Want{Score: 2.0 / 3, Tags: []string{tag}, Checks: []check{{KPI: "grounded_in_memory", Score: 2.0 / 3, Tag: tag,
				Detail: "shares 2 content words with memory entry 'Release' (m-3) (release, blocker), want >= 3"}}},
		},
		{
			name: "repeated words count once",
			in:   input{kpis: grounded, answer: "harness harness Harness HARNESS", memory: memory},
			want: gradetest.Want{Score: 1.0 / 3, Tags: []string{tag}, Checks: []check{{KPI: "grounded_in_memory", Score: 1.0 / 3, Tag: tag, Detail: "shares 1 content word with memory entry 'Harness work' (m-2) (harness)"}}},
		},
		{
			name: "only stop-words shared: not grounded",
			in:   input{kpis: grounded, answer: "They were about there, with which they would have been; their other.", memory: memory},
			want: gradetest.Want{Tags: []string{tag}, Checks: []check{{KPI: "grounded_in_memory", Tag: tag,
				Detail: "the answer has no content words (4+ letters, not stop-words), want >= 3"}}},
		},
		{
			name: "short words do not count",
			in:   input{kpis: grounded, answer: "the CI on Fri had pizza", memory: []sdk.MemoryEntry{{ID: "m", Body: "the ci on fri had pizza"}}},
			want: gradetest.Want{Score: 1.0 / 3, Tags: []string{tag}, Checks: []check{{KPI: "grounded_in_memory", Score: 1.0 / 3, Tag: tag, Detail: "(pizza)"}}},
		},
		{
			name: "no entry shares a word",
			in:   input{kpis: grounded, answer: "Quantum chromodynamics lecture", memory: memory},
			want: gradetest.Want{Tags: []string{tag}, Checks: []check{{KPI: "grounded_in_memory", Tag: tag,
				Detail: "no memory entry shares a content word with the answer (4 entries, 3 answer words), want >= 3"}}},
		},
		{
			name: "a tie goes to the earliest entry; digits are word characters",
			in: input{kpis: map[string]any{"grounded_in_memory": true, "min_overlap": 2}, answer: "build 2026 failed",
				memory: []sdk.MemoryEntry{{ID: "a", Body: "build 2026 passed"}, {ID: "b", Body: "2026 build failed"}, {ID: "c", Body: "build 2026"}}},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "grounded_in_memory", Score: 1, Passed: true, Detail: "memory entry b (build, 2026, failed)"}}},
		},
		{
			name: "tags and summaries are entry words",
			in:   input{kpis: map[string]any{"grounded_in_memory": true, "min_overlap": 2}, answer: "eval summary", memory: []sdk.MemoryEntry{{ID: "x", Tags: []string{"eval"}, SummaryL1: "summary"}}},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "grounded_in_memory", Score: 1, Passed: true}}},
		},
		{
			name: "min_overlap raises the bar",
			in:   input{kpis: map[string]any{"grounded_in_memory": true, "min_overlap": 10}, answer: "harness trace parser frontier ranking", memory: memory},
			want: gradetest.Want{Score: 0.5, Tags: []string{tag}, Checks: []check{{KPI: "grounded_in_memory", Score: 0.5, Tag: tag, Detail: "want >= 10"}}},
		},
		{
			name: "min_overlap below 1 falls back to 3",
			in:   input{kpis: map[string]any{"grounded_in_memory": true, "min_overlap": 0}, answer: "harness trace parser", memory: memory},
			want: gradetest.Want{Score: 1, Diag: "kpi min_overlap: want a whole number >= 1, got 0; using 3",
				Checks: []check{{KPI: "grounded_in_memory", Score: 1, Passed: true, Detail: "want >= 3"}}},
		},
		{
			name: "grounded_in_memory false wants an ungrounded answer",
			in:   input{kpis: map[string]any{"grounded_in_memory": false}, answer: "pizza", memory: memory},
			want: gradetest.Want{Score: 1, Checks: []check{{KPI: "grounded_in_memory", Score: 1, Passed: true, Detail: "want fewer than 3 (grounded_in_memory is false)"}}},
		},
		{
			name: "no memory entries",
			in:   input{kpis: grounded, answer: "harness trace parser"},
			want: gradetest.Want{Tags: []string{tag}, Checks: []check{{KPI: "grounded_in_memory", Tag: tag, Detail: "state_after has no memory entries"}}},
		},
		{
			name: "no state_after snapshot",
			in:   input{kpis: grounded, answer: "harness trace parser", noAfter: true},
			want: gradetest.Want{Tags: []string{tag}, Diag: "no state_after snapshot", Checks: []check{{KPI: "grounded_in_memory", Tag: tag}}},
		},
		{
			name: "answer keywords carry no tag",
			in:   input{kpis: map[string]any{"answer_keywords": []string{"Company OS", "harness"}}, answer: "the harness"},
			want: gradetest.Want{Score: 0.5, Checks: []check{{KPI: "answer_keywords", Score: 0.5, Detail: "missing keywords: Company OS"}}},
		},
		{
			name: "the example pack's task: every check, mean",
			in: input{
				kpis:   map[string]any{"memory_tool_called": true, "grounded_in_memory": true, "answer_keywords": []string{"Company OS", "harness"}},
				answer: "From Company OS memory: we rebuilt the harness trace parser.", tools: []string{"memory_search"}, memory: memory,
			},
			want: gradetest.Want{Score: 1, Checks: []check{
				{KPI: "memory_tool_called", Score: 1, Passed: true},
				{KPI: "grounded_in_memory", Score: 1, Passed: true},
				{KPI: "answer_keywords", Score: 1, Passed: true},
			}},
		},
		{
			name: "settings without their check are diagnostics",
			in:   input{kpis: map[string]any{"min_overlap": 2, "memory_tools": []string{"recall"}, "answer_keywords": []string{}}},
			want: gradetest.Want{Score: 1, Diag: "kpi min_overlap is set but grounded_in_memory is not: it has no effect",
				Checks: []check{{KPI: "answer_keywords", Score: 1, Passed: true}}},
		},
		{
			name: "wrong types",
			in:   input{kpis: map[string]any{"memory_tool_called": 1, "grounded_in_memory": true, "min_overlap": "3", "answer_keywords": map[string]any{}}, answer: "harness trace parser", memory: memory},
			want: gradetest.Want{Score: 0.25, Tags: []string{tag}, Diag: `kpi min_overlap: want a whole number, got a string ("3")`, Checks: []check{
				{KPI: "memory_tool_called", Tag: tag, Detail: "want true or false, got a number (1)"},
				{KPI: "min_overlap", Detail: "want a whole number"},
				{KPI: "grounded_in_memory", Score: 1, Passed: true},
				{KPI: "answer_keywords", Detail: "want a list of strings, got a map"},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := New().Score(context.Background(), newCase(t, tt.in))
			if err != nil {
				t.Fatalf("Score() error = %v", err)
			}
			gradetest.Compare(t, got, tt.want)
		})
	}
}

func TestContentWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"The build-blocker, in PRODUCTION (v2026)!", []string{"build", "blocker", "production", "v2026"}},
		{"that with have this from they were been what when your about which their would there could other into more some than them then these will also", nil},
		{"naïve café über straße", []string{"naïve", "café", "über", "straße"}},
		{"go ci api abc abcd", []string{"abcd"}},
		{"abé cafés ÉTÉS über2", []string{"cafés", "étés", "über2"}},
		{"Harness harness", []string{"harness"}},
	}
	for _, tt := range tests {
		if got := distinctWords(tt.text); !cmp.Equal(tt.want, got) {
			t.Errorf("distinctWords(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestIndexOncePerSnapshot checks that cases sharing a snapshot share its
// index, and that the index answers what a scan would.
func TestIndexOncePerSnapshot(t *testing.T) {
	t.Parallel()
	snap := &sdk.Snapshot{Memory: memory}
	ixs := new(indexCache)
	a, b := ixs.indexOf(snap), ixs.indexOf(snap)
	if a != b {
		t.Errorf("indexOf(same snapshot) built two indexes")
	}
	if got := ixs.indexOf(&sdk.Snapshot{Memory: memory}); got == a {
		t.Errorf("indexOf(other snapshot) reused an index")
	}
	entry, shared := a.best([]string{"release", "blocker", "pizza", "flaky"})
	if entry != 2 || !cmp.Equal(shared, []string{"release", "blocker", "flaky"}) {
		t.Errorf("best() = %d %q, want 2 [release blocker flaky]", entry, shared)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	gradetest.CheckDescription(t, New(), "memory_grounding",
		map[string]sdk.ValueType{
			"memory_tool_called": sdk.Bool, "grounded_in_memory": sdk.Bool, "min_overlap": sdk.Integer,
			"memory_tools": sdk.StringList, "answer_keywords": sdk.StringList,
		},
		map[string]string{"memory_tool_called": tag, "grounded_in_memory": tag})
}

func TestConformance(t *testing.T) {
	sdktest.Run(t, New(), gradetest.Conformance(sdktest.Cases(New().Describe()),
		newCase(t, input{kpis: map[string]any{"memory_tool_called": true, "grounded_in_memory": true}, answer: "release blocker flaky", memory: memory, tools: []string{"memory_search"}}),
		newCase(t, input{kpis: map[string]any{"min_overlap": -1, "grounded_in_memory": "x"}, noAfter: true}),
	)...)
}

// TestShardedIndex checks that the index built in shards equals the one
// built in one pass.
func TestShardedIndex(t *testing.T) {
	t.Parallel()
	entries := make([]sdk.MemoryEntry, 3*shardMin)
	for i := range entries {
		entries[i] = sdk.MemoryEntry{ID: fmt.Sprint(i), Body: fmt.Sprintf("word%d word%d common", i%97, i%13), Tags: []string{fmt.Sprintf("tag%d", i%5)}}
	}
	sharded := buildIndex(entries)
	whole := indexRange(entries, 0, len(entries))
	if len(sharded.postings) != len(whole) {
		t.Fatalf("buildIndex() has %d words, one pass has %d", len(sharded.postings), len(whole))
	}
	for w, p := range whole {
		q := sharded.postings[w]
		if q == nil || !cmp.Equal(*p, *q) {
			t.Fatalf("buildIndex() postings of %q differ from one pass", w)
		}
	}
}

// TestIndexConcurrent checks that cases scored at once share one index.
func TestIndexConcurrent(t *testing.T) {
	t.Parallel()
	snap := &sdk.Snapshot{Memory: memory}
	ixs := new(indexCache)
	got := make([]*memoryIndex, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = ixs.indexOf(snap) })
	}
	wg.Wait()
	for i, ix := range got {
		if ix != got[0] {
			t.Errorf("indexOf() call %d got another index than call 0", i)
		}
	}
}
