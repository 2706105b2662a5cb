package conformance_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/batchrun"
	"github.com/assay-eval/assay/sdk/conformance"
)

// fake is a configurable scorer: a well-behaved one by default. Each
// field set breaks it in one way the conformance checks must find.
type fake struct {
	id       sdk.ID
	score    float64
	checkKPI string
	calls    *atomic.Int64 // when set, the score drifts with every call

	tag          string // the failure tag a failed check carries; "" for the declared one
	noResultTags bool   // leave Result.FailureTags empty
	passUnset    bool   // pass a task that sets none of the KPI keys
	ignoreCtx    bool   // score even when the context is done
	noText       bool   // declare no_streamed_text
	readsText    bool   // score lower when the turn carries streamed text
	noArgs       bool   // declare no_tool_args
	readsArgs    bool   // score lower when a tool call carries arguments
	// listsArgs, when set, declares a KPI "listed_args" of this type
	// marked args_read; readsArg scores lower when its task sets
	// listed_args and some tool call carries an argument under this key.
	listsArgs sdk.ValueType
	readsArg  string
	// readsArgUnlisted scores lower when its task sets no listed_args and
	// some tool call carries an argument under this key: a scorer with a
	// default for a task without the listing.
	readsArgUnlisted string
}

func (f fake) Describe() sdk.Description {
	d := sdk.Description{
		ID: f.id, Version: "0.1.0",
		KPIs: []sdk.KPI{
			{Key: "tool_used", ValueType: sdk.Bool, FailureTag: "wrong_tool"},
			{Key: "tools", ValueType: sdk.StringList, FailureTag: "wrong_tool"},
		},
		Needs: f.needs(),
	}
	if f.listsArgs != "" {
		d.KPIs = append(d.KPIs, sdk.KPI{Key: "listed_args", ValueType: f.listsArgs, FailureTag: "wrong_tool", ArgsRead: true})
	}
	return d
}

// hasArg reports whether some call carries an argument under key.
func hasArg(calls []sdk.ToolCall, key string) bool {
	return slices.ContainsFunc(calls, func(tc sdk.ToolCall) bool { _, ok := tc.Args[key]; return ok })
}

func (f fake) needs() []sdk.Need {
	n := []sdk.Need{sdk.NeedTrace}
	if f.noText {
		n = append(n, sdk.NeedNoStreamedText)
	}
	if f.noArgs {
		n = append(n, sdk.NeedNoToolArgs)
	}
	return n
}

func (f fake) Score(ctx context.Context, c *sdk.Case) (*sdk.Result, error) {
	if err := ctx.Err(); err != nil && !f.ignoreCtx {
		return nil, err
	}
	if len(c.Task.KPIs) == 0 && !f.passUnset {
		return &sdk.Result{Diagnostics: []string{"nothing to check"}}, nil
	}
	s := f.score
	if f.calls != nil {
		s = float64(f.calls.Add(1)%10) / 10
	}
	if len(c.Turn.ToolCalls) > 0 && f.score == 0.5 && f.calls == nil {
		s = 1
	}
	if f.readsText && c.Turn.StreamedText != "" {
		s /= 2
	}
	if f.readsArgs && slices.ContainsFunc(c.Turn.ToolCalls, func(tc sdk.ToolCall) bool { return len(tc.Args) > 0 }) {
		s /= 2
	}
	_, listed := c.Task.KPIs["listed_args"]
	if f.readsArg != "" && listed && hasArg(c.Turn.ToolCalls, f.readsArg) {
		s /= 2
	}
	if f.readsArgUnlisted != "" && !listed && hasArg(c.Turn.ToolCalls, f.readsArgUnlisted) {
		s /= 2
	}
	ch := sdk.Check{KPI: f.checkKPI, Score: min(max(s, 0), 1), Passed: s == 1}
	r := &sdk.Result{Score: s, Checks: []sdk.Check{ch}}
	if !ch.Passed {
		r.Checks[0].FailureTag = "wrong_tool"
		if f.tag != "" {
			r.Checks[0].FailureTag = f.tag
		}
		if !f.noResultTags {
			r.FailureTags = []string{r.Checks[0].FailureTag}
		}
	}
	return r, nil
}

func failing(rep conformance.Report) map[string]int {
	got := map[string]int{}
	for _, r := range rep {
		if !r.OK() {
			got[r.Name] = len(r.Problems)
		}
	}
	return got
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    sdk.Scorer
		want []string // the checks that must fail
	}{
		{"conforming", fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used"}, nil},
		{"bad id", fake{id: "Fake-Scorer", score: 0.5, checkKPI: "tool_used"}, []string{conformance.CheckDescribe}},
		{"score out of range", fake{id: "fake_scorer", score: 1.5, checkKPI: "tool_used"}, []string{conformance.CheckScoresInRange}},
		{"undeclared kpi", fake{id: "fake_scorer", score: 0.5, checkKPI: "latency"}, []string{conformance.CheckDeclaredKPIs}},
		{"not deterministic", fake{id: "fake_scorer", checkKPI: "tool_used", calls: new(atomic.Int64)}, []string{conformance.CheckDeterministic, conformance.CheckConcurrency}},
		{"declares no_streamed_text, reads none", fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used", noText: true}, nil},
		{"declares no_streamed_text, reads it", fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used", noText: true, readsText: true},
			[]string{conformance.CheckStreamedTextUnread}},
		{"declares no_tool_args, reads none", fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used", noArgs: true}, nil},
		{"declares no_tool_args, reads them", fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used", noArgs: true, readsArgs: true},
			[]string{conformance.CheckToolArgsUnread}},
		{"declares both, reads the arguments", fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used", noText: true, noArgs: true, readsArgs: true},
			[]string{conformance.CheckToolArgsUnread}},
		// The generic cases list {"search":["query"]}; their calls are
		// search {query, limit} and create_task {title, priority}.
		{"marks args_read, reads a listed argument", fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used", listsArgs: sdk.StringListMap, readsArg: "query"}, nil},
		{"marks args_read, reads another key of a listed tool", fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used", listsArgs: sdk.StringListMap, readsArg: "limit"},
			[]string{conformance.CheckToolArgsListed}},
		{"marks args_read, reads an unlisted tool's argument", fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used", listsArgs: sdk.StringListMap, readsArg: "title"},
			[]string{conformance.CheckToolArgsListed}},
		// A task that sets no listing is sent no argument at all.
		{"marks args_read, reads arguments when the task lists none", fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used", listsArgs: sdk.StringListMap, readsArgUnlisted: "query"},
			[]string{conformance.CheckToolArgsListed}},
		{"marks args_read on a string_list", fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used", listsArgs: sdk.StringList},
			[]string{conformance.CheckDescribe}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, stop, err := conformance.Serve(tt.s)
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
			defer stop()
			rep := conformance.Check(context.Background(), c)
			var got []string
			for name := range failing(rep) {
				got = append(got, name)
			}
			if diff := cmp.Diff(tt.want, got, cmpSorted); diff != "" {
				t.Errorf("Check(%s) failing checks (-want +got):\n%s\nreport: %+v", tt.name, diff, rep)
			}
			checks := 8
			if tt.s.Describe().NeedsPart(sdk.NeedNoStreamedText) {
				checks++ // streamed_text_unread
			}
			if tt.s.Describe().NeedsPart(sdk.NeedNoToolArgs) {
				checks++ // tool_args_unread
			} else if tt.s.(fake).listsArgs != "" {
				checks++ // tool_args_listed
			}
			if len(rep) != checks && len(tt.want) == 0 {
				t.Errorf("Check(%s) ran %d checks, want %d", tt.name, len(rep), checks)
			}
		})
	}
}

var cmpSorted = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
})

// ignoreCancel is a transport that drops the caller's context, as a broken
// client or server would: a cancelled call still scores every case.
type ignoreCancel struct{ conformance.Client }

func (c ignoreCancel) Score(_ context.Context, cases []*sdk.Case) ([]batchrun.Outcome, error) {
	return c.Client.Score(context.Background(), cases)
}

func TestCheckCancellation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		wrap func(conformance.Client) conformance.Client
		want []string // the checks that must fail
	}{
		{"honoured", func(c conformance.Client) conformance.Client { return c }, nil},
		{"ignored", func(c conformance.Client) conformance.Client { return ignoreCancel{c} }, []string{conformance.CheckCancellation}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, stop, err := conformance.Serve(fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used"})
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
			defer stop()
			rep := conformance.Check(context.Background(), tt.wrap(c))
			var got []string
			for name := range failing(rep) {
				got = append(got, name)
			}
			if diff := cmp.Diff(tt.want, got, cmpSorted); diff != "" {
				t.Errorf("Check(%s) failing checks (-want +got):\n%s\nreport: %+v", tt.name, diff, rep)
			}
		})
	}
}

func TestValidateDescription(t *testing.T) {
	t.Parallel()
	d := sdk.Description{
		ID: "x_y", Version: "",
		KPIs:  []sdk.KPI{{Key: "a", ValueType: sdk.Bool}, {Key: "a", ValueType: "float"}, {Key: "B", ValueType: sdk.Any}},
		Needs: []sdk.Need{"trace", "everything"},
	}
	got := strings.Join(conformance.ValidateDescription(d), "; ")
	want := `version is empty; KPI key "a" is declared twice; KPI key "a" has unknown value type "float"; KPI key "B" is not snake_case; unknown need "everything"`
	if got != want {
		t.Errorf("ValidateDescription() = %s, want %s", got, want)
	}
}

func TestCheckScorer(t *testing.T) {
	t.Parallel()
	rep, err := conformance.CheckScorer(context.Background(), fake{id: "fake_scorer", score: 0.5, checkKPI: "tools"})
	if err != nil {
		t.Fatalf("CheckScorer() error = %v", err)
	}
	var names []string
	for _, r := range rep {
		names = append(names, r.Name)
		if !r.OK() {
			t.Errorf("CheckScorer() %s: %v", r.Name, r.Problems)
		}
	}
	want := []string{conformance.CheckDescribe, conformance.CheckScoresInRange, conformance.CheckDeclaredKPIs,
		conformance.CheckFailureTags, conformance.CheckUnsetKPIs, conformance.CheckDeterministic, conformance.CheckCancellation, conformance.CheckConcurrency, conformance.CheckDirectCancellation}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("CheckScorer() checks (-want +got):\n%s", diff)
	}
}

func TestCasesCoverDeclaredKPIs(t *testing.T) {
	d := fake{id: "f"}.Describe()
	for _, c := range conformance.Cases(d) {
		if c.ID == "empty" {
			continue
		}
		for _, k := range d.KPIs {
			if _, ok := c.Task.KPIs[k.Key]; !ok {
				t.Errorf("Cases() case %q lacks KPI key %q", c.ID, k.Key)
			}
		}
	}
}

// TestConformanceFindings serves one deliberately broken scorer per finding
// of issue 15 item 4 and wants exactly that finding, with what to change.
func TestConformanceFindings(t *testing.T) {
	t.Parallel()
	ok := fake{id: "fake_scorer", score: 0.5, checkKPI: "tool_used"}
	tests := []struct {
		name string
		s    sdk.Scorer
		want string // the one check that must fail
		msg  string // part of its first problem
	}{
		{"undeclared failure tag", with(ok, func(f *fake) { f.tag = "made_up" }), conformance.CheckFailureTags, `carries failure tag "made_up", but KPI tool_used declares "wrong_tool"`},
		{"declared tag never reaches the result", with(ok, func(f *fake) { f.noResultTags = true }), conformance.CheckFailureTags, `declared failure tag "wrong_tool" is not in Result.FailureTags`},
		{"context cancellation ignored", with(ok, func(f *fake) { f.ignoreCtx = true }), conformance.CheckDirectCancellation, "returned a result instead of the context's error"},
		{"nondeterministic", with(ok, func(f *fake) { f.score, f.calls = 0, new(atomic.Int64) }), conformance.CheckDeterministic, "repeat gave"},
		{"unset KPIs scored as a pass", with(ok, func(f *fake) { f.passUnset = true }), conformance.CheckUnsetKPIs, "sets none of the KPI keys, yet scored"},
		{"score above 1", with(ok, func(f *fake) { f.score = 1.5 }), conformance.CheckScoresInRange, "not in [0,1]"},
		{"NaN score", with(ok, func(f *fake) { f.score = math.NaN() }), conformance.CheckScoresInRange, "NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep, err := conformance.CheckScorer(context.Background(), tt.s)
			if err != nil {
				t.Fatalf("CheckScorer: %v", err)
			}
			var found bool
			for _, r := range rep {
				if r.Name != tt.want {
					continue
				}
				found = true
				if r.OK() || !strings.Contains(r.Problems[0], tt.msg) || r.Fix == "" {
					t.Errorf("CheckScorer(%s) %s = %+v, want a problem containing %q and a fix", tt.name, r.Name, r, tt.msg)
				}
			}
			if !found {
				t.Errorf("CheckScorer(%s) ran no %s check: %+v", tt.name, tt.want, rep)
			}
		})
	}
	rep, err := conformance.CheckScorer(context.Background(), ok)
	if err != nil || !rep.OK() {
		t.Errorf("CheckScorer(well-behaved) = %+v, %v, want every check ok", rep, err)
	}
}

func with(f fake, change func(*fake)) fake {
	change(&f)
	return f
}
