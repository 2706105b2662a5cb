package scorerpb_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

var ignoreIndex = cmpopts.IgnoreUnexported(sdk.Snapshot{})

func sampleCases() ([]*sdk.Case, *sdk.Snapshot, *sdk.Snapshot) {
	prio := 3.0
	before := &sdk.Snapshot{Tasks: []sdk.StateTask{{ID: "t0", Title: "old"}}, CapturedAt: "2026-01-01T00:00:00Z"}
	after := &sdk.Snapshot{
		Tasks:  []sdk.StateTask{{ID: "t0", Title: "old"}, {ID: "t1", Title: "new", Priority: &prio, ContextNotes: []sdk.Note{{Text: "n"}}}},
		Memory: []sdk.MemoryEntry{{ID: "m", Body: "b", Tags: []string{"x"}}},
	}
	maxCalls := 4
	start := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	turn := sdk.Turn{
		Events:     []sdk.Event{{Line: 1, Type: "runtime", EventType: "tool_start", ToolName: "search"}, {Line: 2, Type: "raw", Text: "oops"}},
		ToolCalls:  []sdk.ToolCall{{Name: "search", Args: map[string]any{"q": "x", "n": 2.0}}, {Name: "noop", Args: map[string]any{}}},
		ToolEvents: 1, SubAgents: 1, Answer: "a", StreamedText: "s", TextLen: 2, Finalized: true, Error: true,
		ErrorMessages: []string{"e"}, Phases: []string{"p"}, LoopIters: 3, TaskID: "t1", TaskAction: "create",
	}
	cases := []*sdk.Case{
		{
			ID: "c1",
			Task: sdk.Task{Label: "l", Persona: "p", Prompt: "do", KPIs: map[string]json.RawMessage{"k": json.RawMessage(`["a"]`)},
				Safety: sdk.Safety{RequiresHuman: true, MaxToolCalls: &maxCalls}, ToolCatalog: []string{"search"}, SliceTags: []string{"s"}},
			Turn: turn, StartedAt: start, FinishedAt: start.Add(time.Second), StateBefore: before, StateAfter: after,
			Upstream: []sdk.Upstream{{Scorer: "tool_sequence", Result: sdk.Result{Score: 0.5, Checks: []sdk.Check{{KPI: "k", Score: 0.5, Evidence: []string{"e"}}}}}},
		},
		{ID: "c2", Task: sdk.Task{Label: "l2"}, Turn: sdk.Turn{ToolCalls: []sdk.ToolCall{{Name: "x", Args: map[string]any{}}}}, StateBefore: before, StateAfter: after},
		{ID: "c3", StateAfter: before},
	}
	return cases, before, after
}

func TestScoreRequestRoundTrip(t *testing.T) {
	t.Parallel()
	cases, _, _ := sampleCases()
	req, err := scorerpb.EncodeScoreRequest(cases)
	if err != nil {
		t.Fatalf("EncodeScoreRequest() error = %v", err)
	}
	if n := len(req.GetSnapshots()); n != 2 {
		t.Errorf("EncodeScoreRequest() sent %d snapshots, want 2 (one per distinct pointer)", n)
	}
	got, err := scorerpb.DecodeScoreRequest(req)
	if err != nil {
		t.Fatalf("DecodeScoreRequest() error = %v", err)
	}
	if diff := cmp.Diff(cases, got, ignoreIndex, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("DecodeScoreRequest(EncodeScoreRequest()) (-want +got):\n%s", diff)
	}
	if got[0].StateBefore != got[1].StateBefore || got[0].StateAfter != got[1].StateAfter || got[2].StateAfter != got[0].StateBefore {
		t.Errorf("DecodeScoreRequest() cases referencing one snapshot got different pointers")
	}
}

func TestDecodeUnknownRef(t *testing.T) {
	t.Parallel()
	req := &scorerpb.ScoreRequest{Cases: []*scorerpb.Case{{Id: "a", StateAfterRef: "s9"}}}
	if _, err := scorerpb.DecodeScoreRequest(req); err == nil {
		t.Errorf("DecodeScoreRequest(unknown ref) error = nil, want an error")
	}
}

func TestDescriptionRoundTrip(t *testing.T) {
	t.Parallel()
	d := sdk.Description{ID: "x", Version: "1", SDKVersion: "2", Protocols: []int{1},
		KPIs: []sdk.KPI{{Key: "k", ValueType: sdk.Bool, Description: "d", FailureTag: "tool_missing"},
			{Key: "m", ValueType: sdk.StringListMap, ArgsRead: true}}, Needs: []sdk.Need{sdk.NeedTrace}}
	if diff := cmp.Diff(d, scorerpb.DescriptionFromProto(scorerpb.DescriptionToProto(d))); diff != "" {
		t.Errorf("DescriptionFromProto(DescriptionToProto()) (-want +got):\n%s", diff)
	}
}

func TestResultRoundTrip(t *testing.T) {
	t.Parallel()
	r := &sdk.Result{Score: 0.5, Checks: []sdk.Check{{KPI: "k", Score: 1, Passed: true, Detail: "d", Evidence: []string{"e"}, FailureTag: "t"}},
		FailureTags: []string{"t"}, Diagnostics: []string{"x"}}
	got, err := scorerpb.ResultFromProto(scorerpb.ResultToProto("c", r, nil))
	if err != nil || !cmp.Equal(r, got) {
		t.Errorf("ResultFromProto(ResultToProto()) = %+v, %v, want %+v", got, err, r)
	}
	if _, err := scorerpb.ResultFromProto(scorerpb.ResultToProto("c", r, errBoom{})); err == nil || err.Error() != "boom" {
		t.Errorf("ResultFromProto(error result) error = %v, want boom", err)
	}
}

type errBoom struct{}

func (errBoom) Error() string { return "boom" }

func TestStripCase(t *testing.T) {
	t.Parallel()
	cases, before, after := sampleCases()
	c := cases[0]
	tests := []struct {
		name  string
		needs []sdk.Need
		want  func() sdk.Case
	}{
		{"trace", []sdk.Need{sdk.NeedTrace}, func() sdk.Case {
			w := *c
			w.Turn.Events = nil // the per-line events only go to a scorer that needs events
			w.StateBefore, w.StateAfter, w.Upstream = nil, nil, nil
			return w
		}},
		{"trace and events", []sdk.Need{sdk.NeedTrace, sdk.NeedEvents}, func() sdk.Case {
			w := *c
			w.StateBefore, w.StateAfter, w.Upstream = nil, nil, nil
			return w
		}},
		{"trace without streamed text", []sdk.Need{sdk.NeedTrace, sdk.NeedNoStreamedText}, func() sdk.Case {
			w := *c
			w.Turn.Events, w.Turn.StreamedText = nil, ""
			w.StateBefore, w.StateAfter, w.Upstream = nil, nil, nil
			return w
		}},
		{"events without streamed text", []sdk.Need{sdk.NeedEvents, sdk.NeedNoStreamedText}, func() sdk.Case {
			w := *c
			w.Turn.StreamedText = ""
			w.StateBefore, w.StateAfter, w.Upstream = nil, nil, nil
			return w
		}},
		{"answer without streamed text", []sdk.Need{sdk.NeedAnswer, sdk.NeedNoStreamedText}, func() sdk.Case {
			w := *c
			w.Turn = sdk.Turn{Answer: "a"}
			w.StateBefore, w.StateAfter, w.Upstream = nil, nil, nil
			return w
		}},
		{"trace without tool-call arguments", []sdk.Need{sdk.NeedTrace, sdk.NeedNoToolArgs}, func() sdk.Case {
			w := *c
			w.Turn.Events = nil
			w.Turn.ToolCalls = []sdk.ToolCall{{Name: "search"}, {Name: "noop"}}
			w.StateBefore, w.StateAfter, w.Upstream = nil, nil, nil
			return w
		}},
		{"events without text or arguments", []sdk.Need{sdk.NeedEvents, sdk.NeedNoStreamedText, sdk.NeedNoToolArgs}, func() sdk.Case {
			w := *c
			w.Turn.StreamedText = ""
			w.Turn.ToolCalls = []sdk.ToolCall{{Name: "search"}, {Name: "noop"}}
			w.StateBefore, w.StateAfter, w.Upstream = nil, nil, nil
			return w
		}},
		{"answer without tool-call arguments", []sdk.Need{sdk.NeedAnswer, sdk.NeedNoToolArgs}, func() sdk.Case {
			w := *c
			w.Turn = sdk.Turn{Answer: "a"}
			w.StateBefore, w.StateAfter, w.Upstream = nil, nil, nil
			return w
		}},
		{"answer", []sdk.Need{sdk.NeedAnswer}, func() sdk.Case {
			w := *c
			w.Turn = sdk.Turn{Answer: "a"}
			w.StateBefore, w.StateAfter, w.Upstream = nil, nil, nil
			return w
		}},
		{"state", []sdk.Need{sdk.NeedStateBefore, sdk.NeedStateAfter}, func() sdk.Case {
			w := *c
			w.Turn = sdk.Turn{}
			w.StateBefore, w.StateAfter, w.Upstream = before, after, nil
			return w
		}},
		{"upstream", []sdk.Need{sdk.NeedUpstream}, func() sdk.Case {
			w := *c
			w.Turn = sdk.Turn{}
			w.StateBefore, w.StateAfter = nil, nil
			return w
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scorerpb.StripCase(sdk.Description{Needs: tt.needs}, c)
			if diff := cmp.Diff(tt.want(), *got, ignoreIndex); diff != "" {
				t.Errorf("StripCase(%v) (-want +got):\n%s", tt.needs, diff)
			}
		})
	}
	if c.StateBefore == nil || len(c.Turn.Events) == 0 || c.Turn.StreamedText == "" || c.Turn.ToolCalls[0].Args == nil {
		t.Errorf("StripCase modified its input")
	}
}

func BenchmarkEncodeDecode(b *testing.B) {
	cases, _, _ := sampleCases()
	for b.Loop() {
		req, _ := scorerpb.EncodeScoreRequest(cases)
		_, _ = scorerpb.DecodeScoreRequest(req)
	}
}
