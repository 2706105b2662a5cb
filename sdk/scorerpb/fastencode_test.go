package scorerpb_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// TestMarshalCasesTaskWrittenOnce checks that a batch whose cases share
// tasks is written byte for byte as its cases are one by one (where no
// task is reused), when tasks are the same and when they differ in one
// field only: a later case reuses an earlier case's task bytes, and its
// argument listing, only for the same task. It fails when sameTask leaves
// out a field or the listing is kept by label.
func TestMarshalCasesTaskWrittenOnce(t *testing.T) {
	t.Parallel()
	three, four, four2 := 3, 4, 4
	kpis := func(args string) map[string]json.RawMessage {
		return map[string]json.RawMessage{"args": json.RawMessage(args), "plain": json.RawMessage(`["x"]`)}
	}
	m1 := kpis(`{"search":["query"]}`)
	base := sdk.Task{Label: "a", Persona: "ops", Prompt: "p", KPIs: m1, ToolCatalog: []string{"search", "create_task"}, SliceTags: []string{"s"}}
	with := func(f func(*sdk.Task)) sdk.Task {
		t := base
		f(&t)
		return t
	}
	tasks := []sdk.Task{
		base,
		base,
		with(func(t *sdk.Task) { t.Persona = "sales" }),
		with(func(t *sdk.Task) { t.Prompt = "q" }),
		with(func(t *sdk.Task) { t.KPIs = kpis(`{"search":["query"]}`) }), // another map, same entries
		with(func(t *sdk.Task) { t.KPIs = kpis(`{"create_task":["owner"]}`) }),
		with(func(t *sdk.Task) { t.KPIs = nil }),
		with(func(t *sdk.Task) { t.KPIs = nil }),
		with(func(t *sdk.Task) { t.Safety.RequiresHuman = true }),
		with(func(t *sdk.Task) { t.Safety.MaxToolCalls = &three }),
		with(func(t *sdk.Task) { t.Safety.MaxToolCalls = &four }),
		with(func(t *sdk.Task) { t.Safety.MaxToolCalls = &four2 }), // another pointer, same value
		with(func(t *sdk.Task) { t.ToolCatalog = []string{"search"} }),
		with(func(t *sdk.Task) { t.ToolCatalog = nil }),
		with(func(t *sdk.Task) { t.SliceTags = []string{"s", "t"} }),
		with(func(t *sdk.Task) { t.Label = "b" }), // the same map under another label
		with(func(t *sdk.Task) { t.KPIs = kpis(`{"create_task":["owner"]}`) }),
		base, // after the others: found past the label's later tasks
	}
	var cases []*sdk.Case
	for i, task := range tasks {
		cases = append(cases, &sdk.Case{ID: fmt.Sprint("c", i), Task: task, Turn: sdk.Turn{Answer: "a", ToolCalls: []sdk.ToolCall{
			{Name: "search", Args: map[string]any{"query": "invoice", "limit": 10.0}},
			{Name: "create_task", Args: map[string]any{"owner": "ops", "title": "t"}},
		}}})
	}
	// Every case twice, in another order the second time.
	for i := len(tasks) - 1; i >= 0; i-- {
		c := *cases[i]
		c.ID += "'"
		cases = append(cases, &c)
	}
	writers := map[string]func([]byte, []*sdk.Case) ([]byte, error){
		"MarshalCases": scorerpb.MarshalCases,
		"MarshalCasesFor": func(b []byte, cs []*sdk.Case) ([]byte, error) {
			return scorerpb.MarshalCasesFor(b, argsReadDesc(), cs)
		},
	}
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := write(nil, cases)
			if err != nil {
				t.Fatal(err)
			}
			var want []byte
			for _, c := range cases {
				if want, err = write(want, []*sdk.Case{c}); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, want) {
				var g, w scorerpb.ScoreRequest
				if err := proto.Unmarshal(got, &g); err != nil {
					t.Fatal(err)
				}
				if err := proto.Unmarshal(want, &w); err != nil {
					t.Fatal(err)
				}
				t.Errorf("%s(batch) != %s of each case (-each +batch):\n%s", name, name, cmp.Diff(&w, &g, protocmp.Transform()))
			}
		})
	}
}
