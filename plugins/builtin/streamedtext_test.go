package builtin

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// TestNoStreamedTextUnread proves that a built-in scorer declaring
// no_streamed_text does not read the streamed text: on every fixture turn,
// and on the same turn with a different streamed text, it gives the result
// it gives when the host sends the text (as a host before SDK 1.2 does).
func TestNoStreamedTextUnread(t *testing.T) {
	t.Parallel()
	testUnread(t, sdk.NeedNoStreamedText, func(c *sdk.Case) {
		c.Turn.StreamedText = "a different streamed text: release blocker memory harness"
	}, func(c *sdk.Case) bool { return c.Turn.StreamedText == "" })
}

// TestNoToolArgsUnread proves that a built-in scorer declaring
// no_tool_args does not read the tool calls' arguments: on every fixture
// turn, and on the same turn with other arguments, it gives the result it
// gives when the host sends them (as a host before SDK 1.3 does).
func TestNoToolArgsUnread(t *testing.T) {
	t.Parallel()
	testUnread(t, sdk.NeedNoToolArgs, func(c *sdk.Case) {
		calls := make([]sdk.ToolCall, len(c.Turn.ToolCalls))
		for i, tc := range c.Turn.ToolCalls {
			calls[i] = sdk.ToolCall{Name: tc.Name, Args: map[string]any{
				"query": "release blocker memory harness", "title": "", "owner": nil, "limit": 3.0,
			}}
		}
		c.Turn.ToolCalls = calls
	}, func(c *sdk.Case) bool {
		return !slices.ContainsFunc(c.Turn.ToolCalls, func(tc sdk.ToolCall) bool { return tc.Args != nil })
	})
}

// testUnread checks every built-in scorer that declares need (one that
// sends less): on every fixture turn, and on the turn changed by vary, it
// scores the case stripped as a host that does not know the need strips it
// the same as the case stripped with the need, which stripped must accept.
func testUnread(t *testing.T, need sdk.Need, vary func(*sdk.Case), stripped func(*sdk.Case) bool) {
	t.Helper()
	ctx := context.Background()
	p := loadFixturePack(t)
	declared := 0
	for _, s := range Scorers() {
		d := s.Describe()
		if !d.NeedsPart(need) {
			continue
		}
		declared++
		// the description a host that does not know the need acts on
		old := d
		old.Needs = slices.DeleteFunc(slices.Clone(d.Needs), func(n sdk.Need) bool { return n == need })
		for _, task := range p.Tasks {
			for _, variant := range []string{"good", "bad"} {
				c := fixtureCase(t, p, task, variant)
				other := *c
				vary(&other)
				for _, sent := range []*sdk.Case{c, &other} {
					want, err := s.Score(ctx, scorerpb.StripCase(old, sent))
					if err != nil {
						t.Fatalf("Score(%s, %s) without %s error = %v", d.ID, c.ID, need, err)
					}
					less := scorerpb.StripCase(d, sent)
					if !stripped(less) {
						t.Fatalf("StripCase(%s) with %s kept what it leaves out", d.ID, need)
					}
					got, err := s.Score(ctx, less)
					if err != nil {
						t.Fatalf("Score(%s, %s) with %s error = %v", d.ID, c.ID, need, err)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("Score(%s, %s) with %s (-sent all +sent less):\n%s", d.ID, c.ID, need, diff)
					}
				}
			}
		}
	}
	if declared == 0 {
		t.Errorf("no built-in scorer declares %s", need)
	}
}

// TestArgsReadListsEveryArgument proves that a built-in scorer marking a
// KPI args_read reads no tool-call argument its task's value leaves out:
// on every fixture turn, and on the same turn with other arguments
// (listed keys empty, null, missing or set; unlisted keys and tools
// added), it scores the case with only the listed arguments, as the host
// sends it out of process, as it scores it with every argument, as in
// process.
func TestArgsReadListsEveryArgument(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := loadFixturePack(t)
	varied := []map[string]any{
		{"query": "release blocker", "title": "", "owner": nil, "limit": 3.0, "body": "x"},
		{"title": "t", "owner": "ops"},
		{"query": "", "extra": []any{"a"}},
		{},
	}
	declared, listing := 0, 0
	for _, s := range Scorers() {
		d := s.Describe()
		if !slices.ContainsFunc(d.KPIs, func(k sdk.KPI) bool { return k.ArgsRead }) {
			continue
		}
		declared++
		for _, task := range p.Tasks {
			for _, variant := range []string{"good", "bad"} {
				c := fixtureCase(t, p, task, variant)
				sents := []*sdk.Case{c}
				for i := range varied {
					other := *c
					other.Turn.ToolCalls = append([]sdk.ToolCall{{Name: "unlisted_tool", Args: map[string]any{"query": "q"}}}, c.Turn.ToolCalls...)
					for j := range other.Turn.ToolCalls[1:] {
						other.Turn.ToolCalls[j+1].Args = varied[(i+j)%len(varied)]
					}
					sents = append(sents, &other)
				}
				for _, sent := range sents {
					all := scorerpb.StripCase(d, sent)
					listed := scorerpb.ProjectArgs(d, all)
					if listed != all {
						listing++
					}
					want, err := s.Score(ctx, all)
					if err != nil {
						t.Fatalf("Score(%s, %s) with every argument error = %v", d.ID, c.ID, err)
					}
					got, err := s.Score(ctx, listed)
					if err != nil {
						t.Fatalf("Score(%s, %s) with the listed arguments error = %v", d.ID, c.ID, err)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("Score(%s, %s) (-every argument +only the listed):\n%s", d.ID, c.ID, diff)
					}
				}
			}
		}
	}
	if declared == 0 || listing == 0 {
		t.Errorf("%d built-in scorers mark a KPI args_read, %d cases had arguments left out; want some of each", declared, listing)
	}
}
