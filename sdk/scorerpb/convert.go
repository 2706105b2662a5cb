package scorerpb

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/assay-eval/assay/sdk"
)

// DescriptionToProto converts a scorer description to its wire form.
func DescriptionToProto(d sdk.Description) *DescribeResponse {
	out := &DescribeResponse{
		Id:         string(d.ID),
		Version:    d.Version,
		SdkVersion: d.SDKVersion,
		Kpis:       make([]*KPI, len(d.KPIs)),
		Needs:      make([]string, len(d.Needs)),
	}
	for _, p := range d.Protocols {
		out.Protocols = append(out.Protocols, int32(p))
	}
	for i, k := range d.KPIs {
		out.Kpis[i] = &KPI{Key: k.Key, ValueType: string(k.ValueType), Description: k.Description, FailureTag: k.FailureTag, ArgsRead: k.ArgsRead}
	}
	for i, n := range d.Needs {
		out.Needs[i] = string(n)
	}
	return out
}

// DescriptionFromProto converts a wire description to the model.
func DescriptionFromProto(r *DescribeResponse) sdk.Description {
	d := sdk.Description{
		ID:         sdk.ID(r.GetId()),
		Version:    r.GetVersion(),
		SDKVersion: r.GetSdkVersion(),
		KPIs:       make([]sdk.KPI, len(r.GetKpis())),
		Needs:      make([]sdk.Need, len(r.GetNeeds())),
	}
	for _, p := range r.GetProtocols() {
		d.Protocols = append(d.Protocols, int(p))
	}
	for i, k := range r.GetKpis() {
		d.KPIs[i] = sdk.KPI{Key: k.GetKey(), ValueType: sdk.ValueType(k.GetValueType()), Description: k.GetDescription(), FailureTag: k.GetFailureTag(), ArgsRead: k.GetArgsRead()}
	}
	for i, n := range r.GetNeeds() {
		d.Needs[i] = sdk.Need(n)
	}
	return d
}

// EncodeScoreRequest converts a batch of cases to a request. Snapshots are
// deduplicated by pointer: each distinct *sdk.Snapshot is encoded once
// and referenced by every case that uses it.
func EncodeScoreRequest(cases []*sdk.Case) (*ScoreRequest, error) {
	req := &ScoreRequest{Cases: make([]*Case, len(cases))}
	refs := map[*sdk.Snapshot]string{}
	ref := func(s *sdk.Snapshot) (string, error) {
		if s == nil {
			return "", nil
		}
		if r, ok := refs[s]; ok {
			return r, nil
		}
		b, err := json.Marshal(s)
		if err != nil {
			return "", fmt.Errorf("encoding snapshot: %w", err)
		}
		r := "s" + strconv.Itoa(len(refs))
		refs[s] = r
		req.Snapshots = append(req.Snapshots, &Snapshot{Ref: r, Json: b})
		return r, nil
	}
	for i, c := range cases {
		pc, err := encodeCase(c)
		if err != nil {
			return nil, fmt.Errorf("encoding case %q: %w", c.ID, err)
		}
		if pc.StateBeforeRef, err = ref(c.StateBefore); err != nil {
			return nil, fmt.Errorf("encoding case %q: %w", c.ID, err)
		}
		if pc.StateAfterRef, err = ref(c.StateAfter); err != nil {
			return nil, fmt.Errorf("encoding case %q: %w", c.ID, err)
		}
		req.Cases[i] = pc
	}
	return req, nil
}

// DecodeScoreRequest converts a request to cases. Each snapshot is decoded
// once; every case that references it shares the same *sdk.Snapshot.
func DecodeScoreRequest(req *ScoreRequest) ([]*sdk.Case, error) {
	snaps := make(map[string]*sdk.Snapshot, len(req.GetSnapshots()))
	for _, s := range req.GetSnapshots() {
		snap := &sdk.Snapshot{}
		if err := json.Unmarshal(s.GetJson(), snap); err != nil {
			return nil, fmt.Errorf("decoding snapshot %q: %w", s.GetRef(), err)
		}
		snaps[s.GetRef()] = snap
	}
	cases := make([]*sdk.Case, len(req.GetCases()))
	for i, pc := range req.GetCases() {
		c, err := decodeCase(pc)
		if err != nil {
			return nil, fmt.Errorf("decoding case %q: %w", pc.GetId(), err)
		}
		if c.StateBefore, err = snapshotByRef(snaps, pc.GetStateBeforeRef()); err != nil {
			return nil, fmt.Errorf("decoding case %q: %w", pc.GetId(), err)
		}
		if c.StateAfter, err = snapshotByRef(snaps, pc.GetStateAfterRef()); err != nil {
			return nil, fmt.Errorf("decoding case %q: %w", pc.GetId(), err)
		}
		cases[i] = c
	}
	return cases, nil
}

// CheckResults checks that resp answers cases: one result per case, in
// the cases' order.
func CheckResults(cases []*sdk.Case, resp *ScoreResponse) error {
	res := resp.GetResults()
	if len(res) != len(cases) {
		return fmt.Errorf("%d results for %d cases", len(res), len(cases))
	}
	for i, r := range res {
		if r.GetCaseId() != cases[i].ID {
			return fmt.Errorf("result %d is for case %q, want %q", i, r.GetCaseId(), cases[i].ID)
		}
	}
	return nil
}

// snapshotByRef is the snapshot a case references by ref ("" : none).
func snapshotByRef(snaps map[string]*sdk.Snapshot, ref string) (*sdk.Snapshot, error) {
	if ref == "" {
		return nil, nil
	}
	s, ok := snaps[ref]
	if !ok {
		return nil, fmt.Errorf("unknown snapshot ref %q", ref)
	}
	return s, nil
}

func encodeCase(c *sdk.Case) (*Case, error) {
	turn, err := encodeTurn(&c.Turn)
	if err != nil {
		return nil, err
	}
	pc := &Case{
		Id:                 c.ID,
		Task:               encodeTask(&c.Task),
		Turn:               turn,
		StartedAtUnixNano:  unixNano(c.StartedAt),
		FinishedAtUnixNano: unixNano(c.FinishedAt),
	}
	for _, u := range c.Upstream {
		pc.Upstream = append(pc.Upstream, upstreamToProto(u))
	}
	return pc, nil
}

func decodeCase(pc *Case) (*sdk.Case, error) {
	turn, err := decodeTurn(pc.GetTurn())
	if err != nil {
		return nil, err
	}
	c := &sdk.Case{
		ID:         pc.GetId(),
		Task:       decodeTask(pc.GetTask()),
		Turn:       turn,
		StartedAt:  fromUnixNano(pc.GetStartedAtUnixNano()),
		FinishedAt: fromUnixNano(pc.GetFinishedAtUnixNano()),
	}
	for _, u := range pc.GetUpstream() {
		up, err := upstreamFromProto(u)
		if err != nil {
			return nil, err
		}
		c.Upstream = append(c.Upstream, up)
	}
	return c, nil
}

func upstreamToProto(u sdk.Upstream) *Upstream {
	return &Upstream{Scorer: string(u.Scorer), Result: ResultToProto("", &u.Result, nil)}
}

func upstreamFromProto(u *Upstream) (sdk.Upstream, error) {
	r, err := ResultFromProto(u.GetResult())
	if err != nil {
		return sdk.Upstream{}, fmt.Errorf("upstream %q carries an error: %w", u.GetScorer(), err)
	}
	return sdk.Upstream{Scorer: sdk.ID(u.GetScorer()), Result: *r}, nil
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func encodeTask(t *sdk.Task) *Task {
	pt := &Task{
		Label:       t.Label,
		Persona:     t.Persona,
		Prompt:      t.Prompt,
		Safety:      &Safety{RequiresHuman: t.Safety.RequiresHuman},
		ToolCatalog: t.ToolCatalog,
		SliceTags:   t.SliceTags,
	}
	if t.Safety.MaxToolCalls != nil {
		pt.Safety.HasMaxToolCalls = true
		pt.Safety.MaxToolCalls = int32(*t.Safety.MaxToolCalls)
	}
	if len(t.KPIs) > 0 {
		pt.Kpis = make(map[string][]byte, len(t.KPIs))
		for k, v := range t.KPIs {
			pt.Kpis[k] = v
		}
	}
	return pt
}

func decodeTask(pt *Task) sdk.Task {
	t := sdk.Task{
		Label:       pt.GetLabel(),
		Persona:     pt.GetPersona(),
		Prompt:      pt.GetPrompt(),
		Safety:      sdk.Safety{RequiresHuman: pt.GetSafety().GetRequiresHuman()},
		ToolCatalog: pt.GetToolCatalog(),
		SliceTags:   pt.GetSliceTags(),
	}
	if pt.GetSafety().GetHasMaxToolCalls() {
		n := int(pt.GetSafety().GetMaxToolCalls())
		t.Safety.MaxToolCalls = &n
	}
	if len(pt.GetKpis()) > 0 {
		t.KPIs = make(map[string]json.RawMessage, len(pt.GetKpis()))
		for k, v := range pt.GetKpis() {
			t.KPIs[k] = v
		}
	}
	return t
}

func encodeTurn(t *sdk.Turn) (*Turn, error) {
	pt := &Turn{
		ToolEvents:    int32(t.ToolEvents),
		SubAgents:     int32(t.SubAgents),
		Answer:        t.Answer,
		StreamedText:  t.StreamedText,
		TextLen:       int32(t.TextLen),
		Finalized:     t.Finalized,
		Error:         t.Error,
		ErrorMessages: t.ErrorMessages,
		Phases:        t.Phases,
		LoopIters:     int32(t.LoopIters),
		TaskId:        t.TaskID,
		TaskAction:    t.TaskAction,
	}
	if len(t.Events) > 0 {
		// One allocation for every event of the turn.
		evs := make([]Event, len(t.Events))
		pt.Events = make([]*Event, len(t.Events))
		for i, e := range t.Events {
			evs[i] = Event{Line: int32(e.Line), Type: e.Type, Phase: e.Phase, EventType: e.EventType, ToolName: e.ToolName, Text: e.Text}
			pt.Events[i] = &evs[i]
		}
	}
	if len(t.ToolCalls) > 0 {
		calls := make([]ToolCall, len(t.ToolCalls))
		pt.ToolCalls = make([]*ToolCall, len(t.ToolCalls))
		for i, tc := range t.ToolCalls {
			calls[i].Name = tc.Name
			if len(tc.Args) > 0 {
				b, err := AppendArgs(nil, tc.Args)
				if err != nil {
					return nil, fmt.Errorf("encoding args of tool call %d (%s): %w", i, tc.Name, err)
				}
				calls[i].ArgsJson = b
			}
			pt.ToolCalls[i] = &calls[i]
		}
	}
	return pt, nil
}

func decodeTurn(pt *Turn) (sdk.Turn, error) {
	t := sdk.Turn{
		ToolEvents:    int(pt.GetToolEvents()),
		SubAgents:     int(pt.GetSubAgents()),
		Answer:        pt.GetAnswer(),
		StreamedText:  pt.GetStreamedText(),
		TextLen:       int(pt.GetTextLen()),
		Finalized:     pt.GetFinalized(),
		Error:         pt.GetError(),
		ErrorMessages: pt.GetErrorMessages(),
		Phases:        pt.GetPhases(),
		LoopIters:     int(pt.GetLoopIters()),
		TaskID:        pt.GetTaskId(),
		TaskAction:    pt.GetTaskAction(),
	}
	if evs := pt.GetEvents(); len(evs) > 0 {
		t.Events = make([]sdk.Event, len(evs))
		for i, e := range evs {
			t.Events[i] = sdk.Event{Line: int(e.GetLine()), Type: e.GetType(), Phase: e.GetPhase(), EventType: e.GetEventType(), ToolName: e.GetToolName(), Text: e.GetText()}
		}
	}
	if calls := pt.GetToolCalls(); len(calls) > 0 {
		t.ToolCalls = make([]sdk.ToolCall, len(calls))
		for i, tc := range calls {
			args := map[string]any{}
			if b := tc.GetArgsJson(); len(b) > 0 {
				var err error
				if args, err = ParseArgs(b); err != nil {
					return sdk.Turn{}, fmt.Errorf("decoding args of tool call %d (%s): %w", i, tc.GetName(), err)
				}
			}
			t.ToolCalls[i] = sdk.ToolCall{Name: tc.GetName(), Args: args}
		}
	}
	return t, nil
}

// ResultToProto converts a scorer's answer for one case to its wire form. A
// non-nil err is sent as the result's error and r is ignored.
func ResultToProto(caseID string, r *sdk.Result, err error) *Result {
	if err != nil {
		msg := err.Error()
		if msg == "" {
			msg = "scorer failed"
		}
		return &Result{CaseId: caseID, Error: msg}
	}
	if r == nil {
		return &Result{CaseId: caseID, Error: "scorer returned no result"}
	}
	out := &Result{
		CaseId:      caseID,
		Score:       r.Score,
		FailureTags: r.FailureTags,
		Diagnostics: r.Diagnostics,
	}
	if len(r.Checks) > 0 {
		checks := make([]Check, len(r.Checks))
		out.Checks = make([]*Check, len(r.Checks))
		for i, c := range r.Checks {
			checks[i] = Check{Kpi: c.KPI, Score: c.Score, Passed: c.Passed, Detail: c.Detail, Evidence: c.Evidence, FailureTag: c.FailureTag}
			out.Checks[i] = &checks[i]
		}
	}
	return out
}

// ResultFromProto converts a wire result to the model. A result whose error
// is set returns that error and no result.
func ResultFromProto(r *Result) (*sdk.Result, error) {
	if r == nil {
		return nil, errors.New("no result")
	}
	if r.GetError() != "" {
		return nil, errors.New(r.GetError())
	}
	out := &sdk.Result{
		Score:       r.GetScore(),
		Checks:      make([]sdk.Check, len(r.GetChecks())),
		FailureTags: r.GetFailureTags(),
		Diagnostics: r.GetDiagnostics(),
	}
	for i, c := range r.GetChecks() {
		ev := c.GetEvidence()
		if from := c.GetEvidenceFrom(); from != 0 {
			if from < 0 || int(from) > i || len(ev) > 0 {
				return nil, fmt.Errorf("check %d: evidence_from %d names no earlier check, or comes with evidence", i, from)
			}
			ev = slices.Clone(out.Checks[from-1].Evidence)
		}
		out.Checks[i] = sdk.Check{KPI: c.GetKpi(), Score: c.GetScore(), Passed: c.GetPassed(), Detail: c.GetDetail(), Evidence: ev, FailureTag: c.GetFailureTag()}
	}
	return out, nil
}

// StripCase returns a shallow copy of c holding only the parts d declares in
// its needs: trace (the derived turn without its per-line events), events
// (the whole turn, events included), answer (only Turn.Answer), state_before,
// state_after, upstream; no_streamed_text takes Turn.StreamedText out of a
// trace or events turn, and no_tool_args the tool calls' Args (nil). The task and the case's times are always kept. This
// is what a scorer is sent, in-process or not.
func StripCase(d sdk.Description, c *sdk.Case) *sdk.Case {
	out := *c
	switch {
	case d.NeedsPart(sdk.NeedEvents):
	case d.NeedsPart(sdk.NeedTrace):
		out.Turn.Events = nil
	case d.NeedsPart(sdk.NeedAnswer):
		out.Turn = sdk.Turn{Answer: c.Turn.Answer}
	default:
		out.Turn = sdk.Turn{}
	}
	if d.NeedsPart(sdk.NeedNoStreamedText) {
		out.Turn.StreamedText = ""
	}
	if d.NeedsPart(sdk.NeedNoToolArgs) {
		out.Turn.ToolCalls = withoutArgs(out.Turn.ToolCalls)
	}
	if !d.NeedsPart(sdk.NeedStateBefore) {
		out.StateBefore = nil
	}
	if !d.NeedsPart(sdk.NeedStateAfter) {
		out.StateAfter = nil
	}
	if !d.NeedsPart(sdk.NeedUpstream) {
		out.Upstream = nil
	}
	return &out
}

// withoutArgs is calls with every Args nil (NeedNoToolArgs); calls itself
// when none has arguments.
func withoutArgs(calls []sdk.ToolCall) []sdk.ToolCall {
	i := slices.IndexFunc(calls, func(tc sdk.ToolCall) bool { return tc.Args != nil })
	if i < 0 {
		return calls
	}
	out := make([]sdk.ToolCall, len(calls))
	for i, tc := range calls {
		out[i] = sdk.ToolCall{Name: tc.Name}
	}
	return out
}
