package verify

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/trace"
)

const otlpFixture = "testdata/otlp/genai.jsonl"

// TestOTLPSpansToTurns (issue 20 item 4): each trace of the hand-written
// GenAI fixture becomes the turn docs/otel.md says: tool calls with
// JSON-string and object arguments, the root's answer and finish reason,
// errors from status and error.type, sub-agents, latency and cost; the
// trace without content and the trace without a label are warnings naming
// the trace.
func TestOTLPSpansToTurns(t *testing.T) {
	t.Parallel()
	inputs, ds, err := ReadOTLPFile(otlpFixture, OTLPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type turn struct {
		Candidate, Label  string
		LatencyS, CostUSD *float64
		Tools             []trace.ToolCall
		Answer            string
		Finalized, Error  bool
		Errors            []string
		SubAgents         int
	}
	var got []turn
	for _, in := range inputs {
		for _, ts := range in.Turns {
			nd, _, _, err := ts.inline.load()
			if err != nil {
				t.Fatal(err)
			}
			tr, tds, err := trace.Parse("t", bytes.NewReader(nd))
			if err != nil || len(tds) > 0 {
				t.Fatalf("trace of %s/%s does not parse cleanly: %v %v\n%s", in.Candidate, ts.Label, err, tds, nd)
			}
			got = append(got, turn{Candidate: in.Candidate, Label: ts.Label, LatencyS: ts.LatencyS, CostUSD: ts.CostUSD,
				Tools: tr.ToolCalls, Answer: tr.Answer, Finalized: tr.Finalized, Error: tr.Error, Errors: tr.ErrorMessages, SubAgents: tr.SubAgents})
		}
	}
	want := []turn{
		{Candidate: "agent-x", Label: "validate_delivery_tools", LatencyS: fp(20), CostUSD: fp(0.067),
			Tools: []trace.ToolCall{
				{Name: "validate-delivery", Args: map[string]any{"target": "release-4.2", "checks": "all"}},
				{Name: "company_task_list", Args: map[string]any{"state": "open", "tags": []any{"blocker"}}},
			},
			Answer:    "Verdict: FAIL. validate-delivery ran 14 checks: 13 pass and 1 fail. The blocking reason is the production build blocker: migration 0042 times out.",
			Finalized: true},
		{Candidate: "agent-x", Label: "memory_grounded_recent_work", LatencyS: fp(30), CostUSD: fp(0.051),
			Tools: []trace.ToolCall{
				{Name: "company_memory_search", Args: map[string]any{"query": "recent work", "limit": float64(8)}},
				{Name: "company_memory_get", Args: map[string]any{"id": "mem_0156"}},
			},
			Answer: "We worked on Company OS: the harness now scores candidates; memory grounding too.", Finalized: true,
			Error: true, Errors: []string{"span execute_tool company_memory_get: memory service unavailable"}},
		{Candidate: "agent-y", Label: "validate_delivery_tools", LatencyS: fp(12),
			Tools: []trace.ToolCall{{Name: "validate-delivery", Args: map[string]any{}}}},
		{Candidate: "agent-y", Label: "memory_grounded_recent_work", LatencyS: fp(40),
			Tools:  []trace.ToolCall{{Name: "company_memory_search", Args: map[string]any{"query": "recent"}}},
			Answer: "Company OS harness work, from memory.", Finalized: true, SubAgents: 1,
			Error: true, Errors: []string{"span execute_tool company_memory_search: timeout"}},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
	type d struct {
		Line     int
		Severity diag.Severity
		Code     string
		Trace    string
	}
	var gotD []d
	for _, x := range ds {
		id := ""
		for _, w := range strings.Fields(x.Message) {
			if len(w) == 32 {
				id = w
			}
		}
		gotD = append(gotD, d{x.Pos.Line, x.Severity, x.Code, id})
	}
	wantD := []d{
		{2, diag.Warning, codeOTLPNoContent, "0af7651916cd43dd8448eb211c80319c"},
		{3, diag.Warning, codeOTLPNoLabel, "0af7651916cd43dd8448eb211c8031ff"},
	}
	if diff := cmp.Diff(wantD, gotD); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s\n%v", diff, ds)
	}
}

// TestOTLPOptions: --candidate names the traces whose resource names
// none, --label-attr reads another attribute, and a line that is not OTLP
// is an error at its line.
func TestOTLPOptions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	line := `{"resourceSpans":[{"resource":{"attributes":[{"key":"my.task","value":{"stringValue":"validate_delivery_tools"}}]},` +
		`"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"c000000000000001","name":"root",` +
		`"startTimeUnixNano":"1000000000","endTimeUnixNano":"3500000000","attributes":[]}]}]}]}`
	path := filepath.Join(dir, "traces.jsonl")
	if err := os.WriteFile(path, []byte(line+"\n{\"resourceSpans\": 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs, ds, err := ReadOTLPFile(path, OTLPOptions{Candidate: "cand", LabelAttr: "my.task"})
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) != 1 || inputs[0].Candidate != "cand" || inputs[0].Turns[0].Label != "validate_delivery_tools" ||
		*inputs[0].Turns[0].LatencyS != 2.5 {
		t.Errorf("inputs = %+v", inputs)
	}
	if len(ds.Errors()) != 1 || ds.Errors()[0].Pos.Line != 2 || ds.Errors()[0].Code != codeOTLPSyntax {
		t.Errorf("diagnostics = %v, want one otlp.syntax error on line 2", ds)
	}
}

// TestOTLPScoredEndToEnd (issue 20 item 4): the fixture verified against
// the example pack scores each turn with the expected checks passing and
// failing.
func TestOTLPScoredEndToEnd(t *testing.T) {
	req := exampleRequest(t, newLocal())
	req.Runs, req.OTLPFile = nil, otlpFixture
	var warnings diag.List
	req.Diagnostics = func(ds diag.List) { warnings = append(warnings, ds...) }
	got := map[string]map[string]string{}
	req.OnCandidate = func(out *Outcome, _ *CandidateReport) {
		m := map[string]string{}
		for _, r := range out.Results {
			var failed []string
			for _, c := range r.Checks {
				if c.Score < 1 {
					failed = append(failed, c.Name)
				}
			}
			m[r.Label] = fmt.Sprintf("%s finalized=%t error=%t tools=%d failed=%s tags=%s", r.Status, r.Finalized, r.Error,
				r.ToolCalls, strings.Join(failed, ","), strings.Join(r.FailureTags, ","))
		}
		got[out.Candidate] = m
	}
	rep, err := Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Candidates) != 2 {
		t.Fatalf("candidates = %d, want agent-x and agent-y", len(rep.Candidates))
	}
	for _, c := range rep.Candidates {
		if c.Missing != 1 || c.N != 2 {
			t.Errorf("%s: n %d missing %d, want 2 turns and task_create_release_blocker missing", c.Candidate, c.N, c.Missing)
		}
	}
	// Without state snapshots in OTLP, grounded_in_memory (which reads
	// the memory snapshot) fails; agent-y's trace without content has no
	// answer, so its answer checks fail and it did not finalize.
	const missing = "missing finalized=false error=false tools=0 failed= tags="
	want := map[string]map[string]string{
		"agent-x": {
			"validate_delivery_tools":     "scored finalized=true error=false tools=2 failed= tags=",
			"memory_grounded_recent_work": "scored finalized=true error=true tools=2 failed=grounded_in_memory tags=ungrounded_answer",
			"task_create_release_blocker": missing,
		},
		"agent-y": {
			"validate_delivery_tools": "scored finalized=false error=false tools=1 " +
				"failed=answer_keywords,min_answer_length,answer_keywords tags=finalize_missing",
			"memory_grounded_recent_work": "scored finalized=true error=true tools=1 failed=grounded_in_memory tags=ungrounded_answer",
			"task_create_release_blocker": missing,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scored turns (-want +got):\n%s", diff)
	}
	if len(warnings) != 2 {
		t.Errorf("warnings = %v, want the trace without content and the trace without a label", warnings)
	}
}

// TestOTLPLabelPrecedence: the root span's label, else any span's, else
// the resource's, whatever order the spans arrive in.
func TestOTLPLabelPrecedence(t *testing.T) {
	t.Parallel()
	type span struct {
		spanLabel, resLabel string
		root                bool
	}
	for _, tt := range []struct {
		name  string
		spans []span
		want  string
	}{
		{"root span wins over child and resource", []span{{"child", "res", false}, {"root", "res", true}}, "root"},
		{"child span wins over resource", []span{{"", "res", true}, {"child", "res", false}}, "child"},
		{"resource alone", []span{{"", "res", false}}, "res"},
		{"none", []span{{"", "", true}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := &otlpTrace{}
			for _, s := range tt.spans {
				tr.setLabel(s.spanLabel, s.resLabel, s.root)
			}
			if tr.label != tt.want {
				t.Errorf("label = %q, want %q", tr.label, tt.want)
			}
		})
	}
}

// TestOTLPDuplicateLabel: two traces of one candidate for one task are an
// error naming both traces.
func TestOTLPDuplicateLabel(t *testing.T) {
	t.Parallel()
	span := func(trace string) string {
		return `{"traceId":"` + trace + `","spanId":"c000000000000001","name":"root","attributes":[` +
			`{"key":"assay.task.label","value":{"stringValue":"validate_delivery_tools"}}]}`
	}
	line := `{"resourceSpans":[{"scopeSpans":[{"spans":[` + span("0af7651916cd43dd8448eb211c80319c") + "," +
		span("0af7651916cd43dd8448eb211c80319d") + `]}]}]}`
	path := filepath.Join(t.TempDir(), "dup.jsonl")
	if err := os.WriteFile(path, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ds, err := ReadOTLPFile(path, OTLPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs := ds.Errors()
	if len(errs) != 1 || errs[0].Code != codeOTLPDupLabel || !strings.Contains(errs[0].Message, "0af7651916cd43dd8448eb211c80319c") ||
		!strings.Contains(errs[0].Message, "0af7651916cd43dd8448eb211c80319d") {
		t.Errorf("diagnostics = %v, want one otlp.duplicate_label naming both traces", ds)
	}
}
