package scorerpb_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// errText compares errors by their text: a decoded result's error is a
// new value.
var errText = cmp.Comparer(func(a, b error) bool { return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error()) })

type answer struct {
	id  string
	r   *sdk.Result
	err error
}

func sampleAnswers() []answer {
	return []answer{
		{id: "full", r: &sdk.Result{Score: 0.75, FailureTags: []string{"slow", ""}, Diagnostics: []string{"d"},
			Checks: []sdk.Check{
				{KPI: "k", Score: 1, Passed: true, Detail: "ok", Evidence: []string{"e1", "", "e3"}},
				{KPI: "k2", FailureTag: "missing"},
			}}},
		{id: "repeats", r: &sdk.Result{Score: 0.25, FailureTags: []string{"missing", "missing"},
			Checks: []sdk.Check{
				{KPI: "k", Detail: "ok", Evidence: []string{"e1", "e1", strings.Repeat("long evidence ", 8), strings.Repeat("long evidence ", 8)}, FailureTag: "missing"},
				{KPI: "k2", FailureTag: "missing", Evidence: []string{"e3"}},
			}}},
		{id: "zero", r: &sdk.Result{}},
		{id: "negative zero", r: &sdk.Result{Score: math.Copysign(0, -1)}},
		{id: "error", err: errors.New("scorer broke")},
		{id: "empty error", err: errors.New("")},
		{id: "no result"},
		{id: "", r: &sdk.Result{Score: 0.5, Checks: []sdk.Check{}}},
	}
}

// TestAppendResultMatchesProto checks the plugin's direct response writer
// against ResultToProto and proto.Marshal: the same bytes.
func TestAppendResultMatchesProto(t *testing.T) {
	t.Parallel()
	var got []byte
	want := &scorerpb.ScoreResponse{}
	for _, a := range sampleAnswers() {
		var ok bool
		if got, ok = scorerpb.AppendResult(got, a.id, a.r, a.err); !ok {
			t.Fatalf("AppendResult(%q) ok = false, want true", a.id)
		}
		want.Results = append(want.Results, scorerpb.ResultToProto(a.id, a.r, a.err))
	}
	wantB, err := proto.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wantB) {
		t.Errorf("AppendResult() = %x\nwant (proto.Marshal)  %x", got, wantB)
	}
	bad := []answer{
		{id: "\xff", r: &sdk.Result{}},
		{id: "detail", r: &sdk.Result{Checks: []sdk.Check{{KPI: "k", Detail: "\xfe"}}}},
		{id: "evidence", r: &sdk.Result{Checks: []sdk.Check{{KPI: "k", Evidence: []string{"\xfe"}}}}},
		{id: "tag", r: &sdk.Result{FailureTags: []string{"\xfe"}}},
		{id: "error", err: errors.New("\xfe")},
	}
	for _, a := range bad {
		if _, ok := scorerpb.AppendResult(nil, a.id, a.r, a.err); ok {
			t.Errorf("AppendResult(%q) with a string that is not UTF-8: ok = true, want false", a.id)
		}
		if _, err := proto.Marshal(&scorerpb.ScoreResponse{Results: []*scorerpb.Result{scorerpb.ResultToProto(a.id, a.r, a.err)}}); err == nil {
			t.Errorf("proto.Marshal(%q) accepts it; the test input is wrong", a.id)
		}
	}
}

// TestUnmarshalResultsMatchesProto checks the host's direct response
// reader against proto.Unmarshal and ResultFromProto on the same bytes.
func TestUnmarshalResultsMatchesProto(t *testing.T) {
	t.Parallel()
	resp := &scorerpb.ScoreResponse{}
	for _, a := range sampleAnswers() {
		resp.Results = append(resp.Results, scorerpb.ResultToProto(a.id, a.r, a.err))
	}
	b, err := proto.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, 0xf8, 0x07, 0x01) // an unknown field (127, varint): skipped
	var back scorerpb.ScoreResponse
	if err := proto.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var want []scorerpb.WireResult
	for _, r := range back.GetResults() {
		res, err := scorerpb.ResultFromProto(r)
		want = append(want, scorerpb.WireResult{CaseID: r.GetCaseId(), Result: res, Err: err})
	}
	got, err := scorerpb.UnmarshalResults(b)
	if err != nil {
		t.Fatalf("UnmarshalResults() error = %v", err)
	}
	if diff := cmp.Diff(want, got, errText); diff != "" {
		t.Errorf("UnmarshalResults() (-proto +direct):\n%s", diff)
	}
	// The checks' evidence shares one slice: appending to one check's
	// must not change the next one's.
	first := got[1].Result.Checks
	_ = append(first[0].Evidence, "appended")
	if diff := cmp.Diff(want[1].Result.Checks[1].Evidence, first[1].Evidence); diff != "" {
		t.Errorf("check 2's evidence after appending to check 1's (-want +got):\n%s", diff)
	}
	for name, bad := range map[string][]byte{
		"truncated":                b[:len(b)-5],
		"invalid utf8":             {0x0a, 0x04, 0x0a, 0x02, 0xff, 0xfe},
		"invalid utf8 evidence":    {0x0a, 0x05, 0x1a, 0x03, 0x2a, 0x01, 0xfe},
		"invalid utf8 tag":         {0x0a, 0x03, 0x22, 0x01, 0xfe},
		"invalid utf8 kpi, shared": {0x0a, 0x03, 0x22, 0x01, 0x61, 0x0a, 0x05, 0x1a, 0x03, 0x0a, 0x01, 0xfe},
	} {
		if proto.Unmarshal(bad, &scorerpb.ScoreResponse{}) == nil {
			t.Fatalf("%s: proto.Unmarshal accepts %x; the test input is wrong", name, bad)
		}
		if _, err := scorerpb.UnmarshalResults(bad); err == nil {
			t.Errorf("UnmarshalResults(%s) error = nil, want an error", name)
		}
	}
}

// TestAppendResultEvidenceFrom checks evidence sent as a reference to an
// earlier check's (RequestOptions.ReadsEvidenceFrom): the same results as
// every string sent, read by UnmarshalResults and by ResultFromProto, in
// fewer bytes; each check's evidence its own slice.
func TestAppendResultEvidenceFrom(t *testing.T) {
	t.Parallel()
	seq := []string{"search", "create_task", "search"}
	answers := append(sampleAnswers(), answer{id: "same evidence", r: &sdk.Result{Score: 0.5, Checks: []sdk.Check{
		{KPI: "a", Evidence: seq},
		{KPI: "none"},
		{KPI: "b", Evidence: append([]string(nil), seq...), FailureTag: "x"},
		{KPI: "prefix", Evidence: seq[:2]},
		{KPI: "c", Evidence: seq, Detail: "d"},
		{KPI: "other", Evidence: []string{"search", "create_task", "memory_search"}},
		{KPI: "prefix again", Evidence: []string{"search", "create_task"}},
	}}})
	// Checks past maxEvidenceFrom (8) earlier ones are sent whole.
	far := &sdk.Result{Checks: []sdk.Check{{KPI: "0", Evidence: seq}}}
	for i := range 9 {
		far.Checks = append(far.Checks, sdk.Check{KPI: strings.Repeat("f", i+1), Evidence: []string{strings.Repeat("f", i+1)}})
	}
	far.Checks = append(far.Checks, sdk.Check{KPI: "far", Evidence: seq})
	answers = append(answers, answer{id: "far", r: far})
	var plain, refs []byte
	for _, a := range answers {
		var ok1, ok2 bool
		plain, ok1 = scorerpb.AppendResult(plain, a.id, a.r, a.err)
		refs, ok2 = scorerpb.AppendResultFor(refs, scorerpb.RequestOptions{ReadsEvidenceFrom: true}, a.id, a.r, a.err)
		if !ok1 || !ok2 {
			t.Fatalf("AppendResult(%q) ok = %v, AppendResultFor ok = %v, want true", a.id, ok1, ok2)
		}
	}
	if len(refs) >= len(plain) {
		t.Errorf("with evidence_from: %d bytes, want fewer than %d", len(refs), len(plain))
	}
	same := answers[len(answers)-2].r
	without, _ := scorerpb.AppendResultFor(nil, scorerpb.RequestOptions{}, "same evidence", same, nil)
	if old, _ := scorerpb.AppendResult(nil, "same evidence", same, nil); !bytes.Equal(without, old) {
		t.Errorf("AppendResultFor without ReadsEvidenceFrom = %x, want AppendResult's %x", without, old)
	}
	want, err := scorerpb.UnmarshalResults(plain)
	if err != nil {
		t.Fatal(err)
	}
	got, err := scorerpb.UnmarshalResults(refs)
	if err != nil {
		t.Fatalf("UnmarshalResults() error = %v", err)
	}
	if diff := cmp.Diff(want, got, errText); diff != "" {
		t.Errorf("UnmarshalResults() (-every string +evidence_from):\n%s", diff)
	}
	var msg scorerpb.ScoreResponse
	if err := proto.Unmarshal(refs, &msg); err != nil {
		t.Fatal(err)
	}
	var from []int32
	for i, r := range msg.GetResults() {
		res, err := scorerpb.ResultFromProto(r)
		if diff := cmp.Diff(want[i], scorerpb.WireResult{CaseID: r.GetCaseId(), Result: res, Err: err}, errText); diff != "" {
			t.Errorf("ResultFromProto(%q) (-every string +evidence_from):\n%s", r.GetCaseId(), diff)
		}
		if r.GetCaseId() == "same evidence" || r.GetCaseId() == "far" {
			for _, c := range r.GetChecks() {
				from = append(from, c.GetEvidenceFrom())
			}
		}
	}
	if diff := cmp.Diff([]int32{0, 0, 1, 0, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, from); diff != "" {
		t.Errorf("evidence_from of the checks (-want +got):\n%s", diff)
	}
	// A field given twice: the last one counts, as in proto.Unmarshal.
	checksB := []byte{
		0x1a, 0x03, 0x2a, 0x01, 'a', // evidence [a]
		0x1a, 0x03, 0x2a, 0x01, 'b', // evidence [b]
		0x1a, 0x04, 0x38, 0x01, 0x38, 0x02, // evidence_from 1, then 2
	}
	twice := append([]byte{0x0a, byte(len(checksB))}, checksB...)
	var twiceMsg scorerpb.ScoreResponse
	if err := proto.Unmarshal(twice, &twiceMsg); err != nil || twiceMsg.GetResults()[0].GetChecks()[2].GetEvidenceFrom() != 2 {
		t.Fatalf("proto.Unmarshal(evidence_from twice) = %v, %v; the test input is wrong", &twiceMsg, err)
	}
	if r, err := scorerpb.UnmarshalResults(twice); err != nil || len(r) != 1 || len(r[0].Result.Checks) != 3 || !cmp.Equal(r[0].Result.Checks[2].Evidence, []string{"b"}) {
		t.Errorf("UnmarshalResults(evidence_from 1 then 2) = %+v, %v; want the third check with check 2's evidence [b]", r, err)
	}
	// A check's evidence read from an earlier one's is its own.
	checks := got[len(got)-2].Result.Checks
	checks[2].Evidence[0] = "changed"
	_ = append(checks[2].Evidence, "appended")
	if checks[0].Evidence[0] != "search" || checks[4].Evidence[0] != "search" || checks[0].Evidence[1] != "create_task" {
		t.Errorf("changing check 2's evidence changed another's: %q, %q", checks[0].Evidence, checks[4].Evidence)
	}
	for name, bad := range map[string]*scorerpb.Result{
		"names itself":               {Checks: []*scorerpb.Check{{Evidence: []string{"e"}}, {EvidenceFrom: 2}}},
		"names a later check":        {Checks: []*scorerpb.Check{{EvidenceFrom: 2}, {Evidence: []string{"e"}}}},
		"evidence and evidence_from": {Checks: []*scorerpb.Check{{Evidence: []string{"e"}}, {EvidenceFrom: 1, Evidence: []string{"e"}}}},
	} {
		b, err := proto.Marshal(&scorerpb.ScoreResponse{Results: []*scorerpb.Result{bad}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scorerpb.UnmarshalResults(b); err == nil {
			t.Errorf("UnmarshalResults(%s) error = nil, want an error", name)
		}
		if _, err := scorerpb.ResultFromProto(bad); err == nil {
			t.Errorf("ResultFromProto(%s) error = nil, want an error", name)
		}
	}
}

// TestUnmarshalRequestOptions checks that a plugin reads what a host says
// about its answer, and the cases as Unmarshal reads them.
func TestUnmarshalRequestOptions(t *testing.T) {
	t.Parallel()
	cases := []*sdk.Case{{ID: "a", Task: sdk.Task{Label: "t"}}, {ID: "b"}}
	b, err := scorerpb.MarshalCases(nil, cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, reads := range []bool{false, true} {
		withOpts := scorerpb.AppendRequestOptions(append([]byte(nil), b...), scorerpb.RequestOptions{ReadsEvidenceFrom: reads})
		var msg scorerpb.ScoreRequest
		if err := proto.Unmarshal(withOpts, &msg); err != nil || msg.GetReadsEvidenceFrom() != reads {
			t.Errorf("proto.Unmarshal: reads_evidence_from = %v (error %v), want %v", msg.GetReadsEvidenceFrom(), err, reads)
		}
		got, o, err := new(scorerpb.Decoder).UnmarshalRequest(withOpts)
		if err != nil || o.ReadsEvidenceFrom != reads {
			t.Errorf("UnmarshalRequest: ReadsEvidenceFrom = %v (error %v), want %v", o.ReadsEvidenceFrom, err, reads)
		}
		want, _ := scorerpb.UnmarshalCases(b)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("UnmarshalRequest() cases (-Unmarshal +UnmarshalRequest):\n%s", diff)
		}
	}
}
