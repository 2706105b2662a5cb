package scorerpb_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/grpc/mem"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// TestDecoderSharesAcrossBatches checks that a Decoder reads every batch
// as UnmarshalCases does, and that a later batch with the same snapshot and
// task bytes gets the values of the first (one *sdk.Snapshot, one task),
// also when batches are decoded concurrently.
func TestDecoderSharesAcrossBatches(t *testing.T) {
	t.Parallel()
	cases, _, _ := sampleCases()
	b, err := scorerpb.MarshalCases(nil, cases)
	if err != nil {
		t.Fatal(err)
	}
	changed := *cases[0]
	changed.StateAfter = &sdk.Snapshot{Tasks: []sdk.StateTask{{ID: "t9", Title: "other"}}}
	other, err := scorerpb.MarshalCases(nil, []*sdk.Case{&changed})
	if err != nil {
		t.Fatal(err)
	}
	want, err := scorerpb.UnmarshalCases(b)
	if err != nil {
		t.Fatal(err)
	}
	dec := new(scorerpb.Decoder)
	first, err := dec.Unmarshal(b)
	if err != nil {
		t.Fatalf("Decoder.Unmarshal() error = %v", err)
	}
	var wg sync.WaitGroup
	got := make([][]*sdk.Case, 8)
	errs := make([]error, len(got))
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = dec.Unmarshal(b)
		}()
	}
	wg.Wait()
	for i, g := range got {
		if errs[i] != nil {
			t.Fatalf("Decoder.Unmarshal() again error = %v", errs[i])
		}
		if diff := cmp.Diff(want, g, ignoreIndex, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Decoder.Unmarshal() of a later batch (-UnmarshalCases +Decoder):\n%s", diff)
		}
		if g[0].StateAfter != first[0].StateAfter || g[0].StateBefore != first[0].StateBefore {
			t.Errorf("Decoder.Unmarshal() of a later batch: snapshot not shared with the first batch")
		}
		if g[0].Task.Safety.MaxToolCalls != first[0].Task.Safety.MaxToolCalls {
			t.Errorf("Decoder.Unmarshal() of a later batch: task not shared with the first batch")
		}
	}
	o, err := dec.Unmarshal(other)
	if err != nil {
		t.Fatal(err)
	}
	if o[0].StateAfter == first[0].StateAfter || len(o[0].StateAfter.Tasks) != 1 || o[0].StateAfter.Tasks[0].ID != "t9" {
		t.Errorf("Decoder.Unmarshal() of a batch with another snapshot: StateAfter = %+v, want its own snapshot", o[0].StateAfter)
	}
	if o[0].StateBefore != first[0].StateBefore {
		t.Errorf("Decoder.Unmarshal() of a batch with the same StateBefore: not shared")
	}
}

// TestRawCodecPooled checks that a message from NewRawMessage is sent as
// its bytes and handed over to the transport, and that a received message
// holds the whole payload until Free.
func TestRawCodecPooled(t *testing.T) {
	t.Parallel()
	m := scorerpb.NewRawMessage(16)
	m.B = append(m.B, "a batch"...)
	bs, err := scorerpb.RawCodec{}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(bs.Materialize()); got != "a batch" {
		t.Errorf("RawCodec.Marshal() = %q, want %q", got, "a batch")
	}
	if m.B != nil {
		t.Errorf("after RawCodec.Marshal(), B = %q, want nil (the transport owns the bytes)", m.B)
	}
	bs.Free()

	var r scorerpb.RawMessage
	in := mem.BufferSlice{mem.SliceBuffer("one "), mem.SliceBuffer("two")}
	if err := (scorerpb.RawCodec{}).Unmarshal(in, &r); err != nil {
		t.Fatal(err)
	}
	if string(r.B) != "one two" {
		t.Errorf("RawCodec.Unmarshal() B = %q, want %q", r.B, "one two")
	}
	r.Free()
	if r.B != nil {
		t.Errorf("after Free, B = %q, want nil", r.B)
	}
}

func BenchmarkDecoderUnmarshal(b *testing.B) {
	cases, _, _ := sampleCases()
	for i := range 60 {
		c := *cases[i%len(cases)]
		c.ID = fmt.Sprint(i)
		cases = append(cases, &c)
	}
	buf, err := scorerpb.MarshalCases(nil, cases)
	if err != nil {
		b.Fatal(err)
	}
	dec := new(scorerpb.Decoder)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dec.Unmarshal(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecoderSharedStringsAcrossBatches checks that batches decoded one
// after another and side by side through one Decoder, which hands a batch
// the strings and boxed argument values earlier batches left, read exactly
// as each batch alone does: values that differ between batches under the
// same keys and names, and a scorer that changes its arguments changes no
// later batch's.
func TestDecoderSharedStringsAcrossBatches(t *testing.T) {
	t.Parallel()
	var batches [][]byte
	for i := range 4 {
		c := argsCase(nil)
		c.ID = fmt.Sprint("c", i)
		c.Turn.ToolCalls[0].Args = map[string]any{"query": fmt.Sprint("invoice ", i%2), "limit": float64(i), "owner": nil}
		c.Turn.ToolCalls[2].Name = fmt.Sprint("memory_search_", i%3)
		c.Turn.ToolCalls[2].Args = map[string]any{fmt.Sprint("key", i): "m"}
		b, err := scorerpb.MarshalCases(nil, []*sdk.Case{c, c})
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b)
	}
	want := make([][]*sdk.Case, len(batches))
	for i, b := range batches {
		var err error
		if want[i], err = new(scorerpb.Decoder).Unmarshal(b); err != nil {
			t.Fatal(err)
		}
	}
	dec := new(scorerpb.Decoder)
	check := func(i int) {
		got, err := dec.Unmarshal(batches[i])
		if err != nil {
			t.Errorf("Decoder.Unmarshal(batch %d) error = %v", i, err)
			return
		}
		if diff := cmp.Diff(want[i], got, ignoreIndex, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Decoder.Unmarshal(batch %d) after other batches (-alone +shared):\n%s", i, diff)
		}
		// What a scorer may do to its own case.
		got[0].Turn.ToolCalls[0].Args["query"] = "changed"
		delete(got[1].Turn.ToolCalls[0].Args, "limit")
	}
	for round := range 3 {
		for i := range batches {
			check((i + round) % len(batches))
		}
	}
	var wg sync.WaitGroup
	for range 4 {
		for i := range batches {
			wg.Add(1)
			go func() {
				defer wg.Done()
				check(i)
			}()
		}
	}
	wg.Wait()
}
