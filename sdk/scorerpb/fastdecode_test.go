package scorerpb_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/assay-eval/assay/sdk"

	"github.com/assay-eval/assay/sdk/scorerpb"
)

// TestUnmarshalCasesMatchesProto checks the plugin's direct reader against
// proto.Unmarshal followed by DecodeScoreRequest on the same bytes.
func TestUnmarshalCasesMatchesProto(t *testing.T) {
	t.Parallel()
	cases, _, _ := sampleCases()
	req, err := scorerpb.EncodeScoreRequest(cases)
	if err != nil {
		t.Fatalf("EncodeScoreRequest() error = %v", err)
	}
	tests := map[string]*scorerpb.ScoreRequest{
		"sample": req,
		"empty":  {},
		"unknown fields skipped": func() *scorerpb.ScoreRequest {
			r := proto.Clone(req).(*scorerpb.ScoreRequest)
			r.Cases[0].ProtoReflect().SetUnknown([]byte{0xf8, 0x07, 0x01}) // field 127 varint 1
			return r
		}(),
	}
	for name, r := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, err := proto.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var back scorerpb.ScoreRequest
			if err := proto.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			want, err := scorerpb.DecodeScoreRequest(&back)
			if err != nil {
				t.Fatal(err)
			}
			got, err := scorerpb.UnmarshalCases(b)
			if err != nil {
				t.Fatalf("UnmarshalCases() error = %v", err)
			}
			if diff := cmp.Diff(want, got, ignoreIndex, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("UnmarshalCases() (-proto +direct):\n%s", diff)
			}
			if len(got) == 3 && (got[0].StateBefore != got[1].StateBefore || got[2].StateAfter != got[0].StateBefore) {
				t.Errorf("UnmarshalCases() cases referencing one snapshot got different pointers")
			}
		})
	}
}

func TestUnmarshalCasesErrors(t *testing.T) {
	t.Parallel()
	unknownRef, _ := proto.Marshal(&scorerpb.ScoreRequest{Cases: []*scorerpb.Case{{Id: "a", StateAfterRef: "s9"}}})
	badUTF8, _ := proto.Marshal(&scorerpb.ScoreRequest{Cases: []*scorerpb.Case{{Id: "a", Turn: &scorerpb.Turn{}}}})
	badUTF8 = append(badUTF8, 0x0a, 0x04, 0x0a, 0x02, 0xff, 0xfe) // a case whose id is not UTF-8
	tests := map[string][]byte{
		"unknown snapshot ref": unknownRef,
		"truncated":            {0x0a, 0x05, 0x0a},
		"invalid utf8":         badUTF8,
	}
	for name, b := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var back scorerpb.ScoreRequest
			if proto.Unmarshal(b, &back) == nil {
				if _, err := scorerpb.DecodeScoreRequest(&back); err == nil {
					t.Fatalf("proto path accepts %x; the test input is wrong", b)
				}
			}
			if _, err := scorerpb.UnmarshalCases(b); err == nil {
				t.Errorf("UnmarshalCases(%x) error = nil, want an error", b)
			}
		})
	}
}

func BenchmarkUnmarshalCases(b *testing.B) {
	cases, _, _ := sampleCases()
	req, _ := scorerpb.EncodeScoreRequest(cases)
	buf, _ := proto.Marshal(req)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := scorerpb.UnmarshalCases(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMarshalCasesMatchesProto checks the host's direct writer against
// EncodeScoreRequest: the bytes decode to the same message, and to the same
// cases through both readers.
func TestMarshalCasesMatchesProto(t *testing.T) {
	t.Parallel()
	sample, _, _ := sampleCases()
	big := sample[0].Turn
	big.StreamedText = strings.Repeat("long text ", 300) // lengths over one varint byte
	tests := map[string][]*sdk.Case{
		"sample":    sample,
		"empty":     nil,
		"long turn": {{ID: "long", Turn: big, Task: sample[0].Task}},
	}
	for name, cases := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := scorerpb.EncodeScoreRequest(cases)
			if err != nil {
				t.Fatal(err)
			}
			b, err := scorerpb.MarshalCases(nil, cases)
			if err != nil {
				t.Fatalf("MarshalCases() error = %v", err)
			}
			var got scorerpb.ScoreRequest
			if err := proto.Unmarshal(b, &got); err != nil {
				t.Fatalf("proto.Unmarshal(MarshalCases()) error = %v", err)
			}
			if diff := cmp.Diff(want, &got, protocmp.Transform()); diff != "" {
				t.Errorf("MarshalCases() (-EncodeScoreRequest +got):\n%s", diff)
			}
			back, err := scorerpb.UnmarshalCases(b)
			if err != nil {
				t.Fatalf("UnmarshalCases(MarshalCases()) error = %v", err)
			}
			if diff := cmp.Diff(cases, back, ignoreIndex, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("UnmarshalCases(MarshalCases()) (-want +got):\n%s", diff)
			}
		})
	}
}

func BenchmarkMarshalCases(b *testing.B) {
	cases, _, _ := sampleCases()
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		var err error
		if buf, err = scorerpb.MarshalCases(buf[:0], cases); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecoderNoToolArgs: for a scorer that declares no_tool_args, the
// plugin's decoder gives a tool call the host sent without arguments a nil
// Args, as StripCase leaves it in process; arguments a host sent anyway
// (one before SDK 1.3) are decoded; without the need a call without
// arguments gets an empty map, as it always did.
func TestDecoderNoToolArgs(t *testing.T) {
	t.Parallel()
	cases, _, _ := sampleCases()
	d := sdk.Description{Needs: []sdk.Need{sdk.NeedTrace, sdk.NeedNoToolArgs}}
	stripped, err := scorerpb.MarshalCases(nil, []*sdk.Case{scorerpb.StripCase(d, cases[0])})
	if err != nil {
		t.Fatal(err)
	}
	old := sdk.Description{Needs: []sdk.Need{sdk.NeedTrace}}
	full, err := scorerpb.MarshalCases(nil, []*sdk.Case{scorerpb.StripCase(old, cases[0])})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		noToolArgs bool
		req        []byte
		want       []sdk.ToolCall
	}{
		{"stripped, scorer declares it", true, stripped, []sdk.ToolCall{{Name: "search"}, {Name: "noop"}}},
		{"sent by an older host, scorer declares it", true, full, []sdk.ToolCall{{Name: "search", Args: map[string]any{"q": "x", "n": 2.0}}, {Name: "noop"}}},
		{"stripped, scorer does not declare it", false, stripped, []sdk.ToolCall{{Name: "search", Args: map[string]any{}}, {Name: "noop", Args: map[string]any{}}}},
		{"sent, scorer does not declare it", false, full, []sdk.ToolCall{{Name: "search", Args: map[string]any{"q": "x", "n": 2.0}}, {Name: "noop", Args: map[string]any{}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dec := &scorerpb.Decoder{NoToolArgs: tt.noToolArgs}
			got, err := dec.Unmarshal(tt.req)
			if err != nil {
				t.Fatalf("Unmarshal() error = %v", err)
			}
			// cmp tells a nil map from an empty one: that is the point here
			if diff := cmp.Diff(tt.want, got[0].Turn.ToolCalls); diff != "" {
				t.Errorf("Unmarshal() tool calls (-want +got):\n%s", diff)
			}
		})
	}
}
