package grade

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/excerpt"
)

var desc = sdk.Description{ID: "demo", KPIs: []sdk.KPI{
	{Key: "a", ValueType: sdk.Bool, FailureTag: "tool_missing"},
	{Key: "b", ValueType: sdk.Number, FailureTag: "state_not_changed"},
	{Key: "c", ValueType: sdk.StringList},
}}

func task(kpis map[string]string) *sdk.Task {
	t := &sdk.Task{Label: "demo", KPIs: map[string]json.RawMessage{}}
	for k, v := range kpis {
		t.KPIs[k] = json.RawMessage(v)
	}
	return t
}

func TestResult(t *testing.T) {
	t.Parallel()
	s := NewSheet(desc, task(nil))
	s.Score("a", 0.5, "half")
	s.Fail("b", "none")
	s.Pass("c", "all")
	s.Score("a", math.NaN(), "nan")
	s.Score("b", 7, "over")
	s.Score("b", -1, "under")
	got := s.Result()
	want := &sdk.Result{
		Score: (0.5 + 0 + 1 + 0 + 1 + 0) / 6,
		Checks: []sdk.Check{
			{KPI: "a", Score: 0.5, Detail: "half", FailureTag: "tool_missing"},
			{KPI: "b", Detail: "none", FailureTag: "state_not_changed"},
			{KPI: "c", Score: 1, Passed: true, Detail: "all"},
			{KPI: "a", Detail: "nan", FailureTag: "tool_missing"},
			{KPI: "b", Score: 1, Passed: true, Detail: "over"},
			{KPI: "b", Detail: "under", FailureTag: "state_not_changed"},
		},
		FailureTags: []string{"state_not_changed", "tool_missing"},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Result() mismatch (-want +got):\n%s", diff)
	}
}

func TestResultWithoutChecks(t *testing.T) {
	t.Parallel()
	got := NewSheet(desc, task(nil)).Result()
	want := &sdk.Result{Checks: []sdk.Check{}, Diagnostics: []string{`nothing to check: task "demo" sets none of the KPI keys demo checks (a, b, c)`}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Result() mismatch (-want +got):\n%s", diff)
	}
}

func TestReaders(t *testing.T) {
	t.Parallel()
	s := NewSheet(desc, task(map[string]string{
		"bool": "true", "num": "7.5", "int": "3", "str": `"x"`, "list": `["a","b"]`, "map": `{"t":["k"]}`,
		"badjson": `{`, "float_int": "3.0",
	}))
	if v, ok := s.Bool("bool"); !ok || !v {
		t.Errorf("Bool(bool) = %v, %v, want true, true", v, ok)
	}
	if v, ok := s.Number("num"); !ok || v != 7.5 {
		t.Errorf("Number(num) = %v, %v, want 7.5, true", v, ok)
	}
	if v, ok := s.Integer("int"); !ok || v != 3 {
		t.Errorf("Integer(int) = %v, %v, want 3, true", v, ok)
	}
	if v, ok := s.Integer("float_int"); !ok || v != 3 {
		t.Errorf("Integer(float_int) = %v, %v, want 3, true", v, ok)
	}
	if v, ok := s.String("str"); !ok || v != "x" {
		t.Errorf("String(str) = %q, %v, want x, true", v, ok)
	}
	if v, ok := s.StringList("list"); !ok || !cmp.Equal(v, []string{"a", "b"}) {
		t.Errorf("StringList(list) = %q, %v, want [a b], true", v, ok)
	}
	if v, ok := s.StringListMap("map"); !ok || !cmp.Equal(v, map[string][]string{"t": {"k"}}) {
		t.Errorf("StringListMap(map) = %q, %v, want map[t:[k]], true", v, ok)
	}
	if _, ok := s.Bool("unset"); ok {
		t.Errorf("Bool(unset) ok = true, want false")
	}
	if len(s.Checks()) != 0 || len(s.diags) != 0 {
		t.Errorf("good values recorded checks %v and diagnostics %q, want none", s.Checks(), s.diags)
	}
	for _, read := range []func() bool{
		func() bool { _, ok := s.Bool("num"); return ok },
		func() bool { _, ok := s.Number("str"); return ok },
		func() bool { _, ok := s.Integer("num"); return ok },
		func() bool { _, ok := s.String("list"); return ok },
		func() bool { _, ok := s.StringList("map"); return ok },
		func() bool { _, ok := s.StringListMap("list"); return ok },
		func() bool { _, ok := s.Bool("badjson"); return ok },
	} {
		if read() {
			t.Errorf("reading a value of the wrong type reported ok")
		}
	}
	if len(s.Checks()) != 7 || len(s.diags) != 7 {
		t.Errorf("wrong values recorded %d checks and %d diagnostics, want 7 and 7", len(s.Checks()), len(s.diags))
	}
	for _, c := range s.Checks() {
		if c.Score != 0 || c.Passed {
			t.Errorf("check of a wrong value %s = %v, want a failed 0", c.KPI, c.Score)
		}
	}
}

func TestKeywords(t *testing.T) {
	t.Parallel()
	found, missing := Keywords("The Production BUILD", []string{"production", "build", "blocker", "Prod"})
	if !cmp.Equal(found, []string{"production", "build", "Prod"}) || !cmp.Equal(missing, []string{"blocker"}) {
		t.Errorf("Keywords() = %q, %q, want [production build Prod], [blocker]", found, missing)
	}
	if score, detail := KeywordScore("x", "", nil); score != 1 || detail != "no keywords listed" {
		t.Errorf("KeywordScore(no keywords) = %v, %q, want 1, no keywords listed", score, detail)
	}
}

func TestCount(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0 notes", 1: "1 note", 2: "2 notes"} {
		if got := Count(n, "note", "notes"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestScoreBoundsDetails: a detail or evidence longer than the excerpt
// bound is cut to it, so the host's contract check never refuses a
// built-in's result for its length.
func TestScoreBoundsDetails(t *testing.T) {
	t.Parallel()
	s := NewSheet(desc, task(nil))
	long := strings.Repeat("k, ", 400)
	s.Score("c", 1, long, "short", long)
	c := s.Result().Checks[0]
	got := []int{utf8.RuneCountInString(c.Detail), utf8.RuneCountInString(c.Evidence[0]), utf8.RuneCountInString(c.Evidence[1])}
	if diff := cmp.Diff([]int{excerpt.Max, 5, excerpt.Max}, got); diff != "" {
		t.Errorf("Score(long detail) lengths (-want +got):\n%s", diff)
	}
	if !strings.HasSuffix(c.Detail, excerpt.Marker) {
		t.Errorf("Score(long detail) detail = %q, want it to end in %q", c.Detail, excerpt.Marker)
	}
}

// TestGradeKit is issue 15 item 3: a KPI of the wrong type names the key and
// the type wanted, and the failure tags of failed checks reach the result
// without the author copying them.
func TestGradeKit(t *testing.T) {
	t.Parallel()
	d := sdk.Description{ID: "kw", KPIs: []sdk.KPI{
		{Key: "answer_keywords", ValueType: sdk.StringList, FailureTag: "ungrounded_answer"},
		{Key: "finalized", ValueType: sdk.Bool, FailureTag: "not_finalized"},
	}}
	s := NewSheet(d, task(map[string]string{"answer_keywords": `"refund"`, "finalized": `true`}))
	if _, ok := s.StringList("answer_keywords"); ok {
		t.Errorf("StringList(answer_keywords) of a string = ok, want not ok")
	}
	s.Verdict("finalized", true, "finalized")
	r := s.Result()
	want := &sdk.Result{
		Score: 0.5,
		Checks: []sdk.Check{
			{KPI: "answer_keywords", FailureTag: "ungrounded_answer",
				Detail: `kpi answer_keywords: want a list of strings, got a string ("refund"); the check cannot run`},
			{KPI: "finalized", Score: 1, Passed: true, Detail: "finalized"},
		},
		FailureTags: []string{"ungrounded_answer"},
		Diagnostics: []string{`kpi answer_keywords: want a list of strings, got a string ("refund")`},
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Result() (-want +got):\n%s", diff)
	}
}
