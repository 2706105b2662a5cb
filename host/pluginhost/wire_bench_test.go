package pluginhost_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/plugins/toolsequence"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// BenchmarkWire64 measures the wire cost of one 64-case batch of
// BenchmarkScore1000's turns, without the transport: encode, marshal,
// unmarshal, decode.
func BenchmarkWire64(b *testing.B) {
	cases := benchCases(64)
	var size int
	for b.Loop() {
		req, err := scorerpb.EncodeScoreRequest(cases)
		if err != nil {
			b.Fatal(err)
		}
		buf, err := proto.Marshal(req)
		if err != nil {
			b.Fatal(err)
		}
		size = len(buf)
		var back scorerpb.ScoreRequest
		if err := proto.Unmarshal(buf, &back); err != nil {
			b.Fatal(err)
		}
		if _, err := scorerpb.DecodeScoreRequest(&back); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size), "bytes/batch")
}

// BenchmarkWire64Direct is BenchmarkWire64 on the path a batch takes since
// protocol 1's direct reader and writer: scorerpb.MarshalCases on the host,
// scorerpb.UnmarshalCases in the plugin (the same bytes).
func BenchmarkWire64Direct(b *testing.B) {
	cases := benchCases(64)
	var size int
	var buf []byte
	for b.Loop() {
		var err error
		if buf, err = scorerpb.MarshalCases(buf[:0], cases); err != nil {
			b.Fatal(err)
		}
		size = len(buf)
		if _, err := scorerpb.UnmarshalCases(buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size), "bytes/batch")
}

// BenchmarkResults64 measures the wire cost of the answer to one 64-case
// batch of BenchmarkScore1000's turns (tool_sequence's results, five checks
// each, three of them with the same evidence), without the transport:
// scorerpb.AppendResultFor as the plugin answers the host, evidence that
// repeats an earlier check's sent as a reference, and
// scorerpb.UnmarshalResults on the host.
func BenchmarkResults64(b *testing.B) {
	cases := benchCases(64)
	s := toolsequence.New()
	results := make([]*scorer.Result, len(cases))
	for i, c := range cases {
		r, err := s.Score(context.Background(), c)
		if err != nil {
			b.Fatal(err)
		}
		results[i] = r
	}
	// What the host says it reads (see proc.score).
	opts := scorerpb.RequestOptions{ReadsEvidenceFrom: true}
	var size int
	var buf []byte
	for b.Loop() {
		buf = buf[:0]
		for i, r := range results {
			var ok bool
			if buf, ok = scorerpb.AppendResultFor(buf, opts, cases[i].ID, r, nil); !ok {
				b.Fatal("AppendResult refused a result")
			}
		}
		size = len(buf)
		if _, err := scorerpb.UnmarshalResults(buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size), "bytes/batch")
}

// BenchmarkWire64Stripped is BenchmarkWire64Direct for the batch
// BenchmarkScore1000 sends: its cases stripped to what tool_sequence
// declares (scorerpb.StripCase) and of the tool calls' arguments only those
// its tool_args values list (scorerpb.MarshalCasesFor), the host's writing
// and the plugin's reading measured apart.
func BenchmarkWire64Stripped(b *testing.B) {
	d := toolsequence.New().Describe()
	cases := benchCases(64)
	for i, c := range cases {
		cases[i] = scorerpb.StripCase(d, c)
	}
	buf, err := scorerpb.MarshalCasesFor(nil, d, cases)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("marshal", func(b *testing.B) {
		var out []byte
		for b.Loop() {
			if out, err = scorerpb.MarshalCasesFor(out[:0], d, cases); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(out))/float64(len(cases)), "bytes/case")
	})
	b.Run("unmarshal", func(b *testing.B) {
		dec := scorerpb.Decoder{NoToolArgs: scorerpb.ReadsListedArgs(d)}
		for b.Loop() {
			if _, err := dec.Unmarshal(buf); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(buf))/float64(len(cases)), "bytes/case")
	})
}
