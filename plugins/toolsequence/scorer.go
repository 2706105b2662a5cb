package toolsequence

import (
	"fmt"
	"slices"
	"strings"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/grade"
)

// KPI keys.
const (
	KeyContains       = "tool_sequence_contains"
	KeyExact          = "tool_sequence_exact"
	KeyInOrder        = "tool_sequence_in_order"
	KeyNoHallucinated = "no_hallucinated_tool_key"
	KeyArgs           = "tool_args"
)

// Failure tags.
const (
	tagMissing   = "tool_missing"
	tagWrongArgs = "tool_wrong_args"
)

// description is built fresh for every caller, so nobody can change another's.
func description() sdk.Description {
	return sdk.Description{
		ID:      "tool_sequence",
		Version: "1.0.0",
		KPIs: []sdk.KPI{
			{Key: KeyContains, ValueType: sdk.StringList, FailureTag: tagMissing,
				Description: "fraction of the listed tools the turn called at least once"},
			{Key: KeyExact, ValueType: sdk.StringList, FailureTag: tagMissing,
				Description: "1 when the sequence of called tools equals the list exactly, else 0"},
			{Key: KeyInOrder, ValueType: sdk.StringList, FailureTag: tagMissing,
				Description: "1 when the listed tools were called in this order (other calls may come between), else 0"},
			{Key: KeyNoHallucinated, ValueType: sdk.Bool, FailureTag: tagMissing,
				Description: "true: every called tool is in the task's tool_catalog (false: some is not); an empty catalog cannot be checked"},
			{Key: KeyArgs, ValueType: sdk.StringListMap, FailureTag: tagWrongArgs, ArgsRead: true,
				Description: "{tool: [arg keys]}: fraction of the listed tools called at least once with every key present in every call"},
		},
		Needs: []sdk.Need{sdk.NeedTrace, sdk.NeedNoStreamedText},
	}
}

// New returns the tool_sequence scorer.
func New() sdk.Scorer { return grade.NewScorer(description, checkCase) }

// checkCase records the checks of case c on s.
func checkCase(s *grade.Sheet, c *sdk.Case) {
	called := make([]string, len(c.Turn.ToolCalls))
	for i, tc := range c.Turn.ToolCalls {
		called[i] = tc.Name
	}
	if want, ok := s.StringList(KeyContains); ok {
		contains(s, called, want)
	}
	if want, ok := s.StringList(KeyExact); ok {
		s.Verdict(KeyExact, slices.Equal(called, want),
			fmt.Sprintf("called %s, want exactly %s", seq(called), seq(want)), called...)
	}
	if want, ok := s.StringList(KeyInOrder); ok {
		inOrder(s, called, want)
	}
	if want, ok := s.Bool(KeyNoHallucinated); ok {
		catalog(s, called, c.Task.ToolCatalog, want)
	}
	if want, ok := s.StringListMap(KeyArgs); ok {
		args(s, c.Turn.ToolCalls, want)
	}
}

func contains(s *grade.Sheet, called, want []string) {
	if len(want) == 0 {
		s.Pass(KeyContains, "no tools listed")
		return
	}
	var missing []string
	for _, w := range want {
		if !slices.Contains(called, w) {
			missing = append(missing, w)
		}
	}
	score := float64(len(want)-len(missing)) / float64(len(want))
	if len(missing) == 0 {
		s.Score(KeyContains, score, "called every required tool: "+strings.Join(want, ", "), called...)
		return
	}
	s.Score(KeyContains, score, fmt.Sprintf("%d of %d required tools called; missing tools: %s (called %s)",
		len(want)-len(missing), len(want), strings.Join(missing, ", "), seq(called)), called...)
}

func inOrder(s *grade.Sheet, called, want []string) {
	i := 0
	for _, name := range called {
		if i < len(want) && name == want[i] {
			i++
		}
	}
	if i == len(want) {
		s.Pass(KeyInOrder, fmt.Sprintf("called %s in order", seq(want)), called...)
		return
	}
	missing := fmt.Sprintf("%s not called", want[i])
	if i > 0 {
		missing = fmt.Sprintf("%s not called after %s", want[i], seq(want[:i]))
	}
	s.Fail(KeyInOrder, fmt.Sprintf("called %s; %s (want %s in order)", seq(called), missing, seq(want)), called...)
}

func catalog(s *grade.Sheet, called, catalog []string, want bool) {
	if len(catalog) == 0 {
		s.Diag("kpi %s: the task has no tool_catalog to check called tools against; add tool_catalog to the pack or the task", KeyNoHallucinated)
		s.Fail(KeyNoHallucinated, "no tool_catalog: cannot tell which tools are real; add tool_catalog to the pack or the task")
		return
	}
	var unknown []string
	for _, name := range called {
		if !slices.Contains(catalog, name) && !slices.Contains(unknown, name) {
			unknown = append(unknown, name)
		}
	}
	switch {
	case len(unknown) == 0 && want:
		s.Pass(KeyNoHallucinated, fmt.Sprintf("every tool called is in the tool_catalog (%s)", grade.Count(len(called), "call", "calls")))
	case len(unknown) == 0:
		s.Fail(KeyNoHallucinated, "every called tool is in the catalog, want some outside it (no_hallucinated_tool_key is false)")
	case want:
		s.Fail(KeyNoHallucinated, fmt.Sprintf("called tools not in the catalog: %s", strings.Join(unknown, ", ")), unknown...)
	default:
		s.Pass(KeyNoHallucinated, fmt.Sprintf("called tools not in the catalog: %s (no_hallucinated_tool_key is false)",
			strings.Join(unknown, ", ")), unknown...)
	}
}

func args(s *grade.Sheet, calls []sdk.ToolCall, want map[string][]string) {
	if len(want) == 0 {
		s.Pass(KeyArgs, "no tools listed")
		return
	}
	tools := make([]string, 0, len(want))
	for name := range want {
		tools = append(tools, name)
	}
	slices.Sort(tools)
	var problems, bad []string
	for _, tool := range tools {
		if p := toolArgs(calls, tool, want[tool]); p != "" {
			problems = append(problems, p)
			bad = append(bad, tool)
		}
	}
	score := float64(len(tools)-len(bad)) / float64(len(tools))
	if len(bad) == 0 {
		s.Score(KeyArgs, score, "every listed tool was called with its required argument keys: "+strings.Join(tools, ", "))
		return
	}
	s.Score(KeyArgs, score, fmt.Sprintf("%d of %d listed tools called with their required argument keys; %s",
		len(tools)-len(bad), len(tools), strings.Join(problems, "; ")), bad...)
}

// toolArgs says what is wrong with the calls of tool ("" when every call has
// every key). A key counts when present with a value other than null or "".
func toolArgs(calls []sdk.ToolCall, tool string, keys []string) string {
	n := 0
	var problems []string
	for _, call := range calls {
		if call.Name != tool {
			continue
		}
		n++
		var missing []string
		for _, k := range keys {
			if v, ok := call.Args[k]; !ok || v == nil || v == "" {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("call %d of %s lacks %s", n, tool, strings.Join(missing, ", ")))
		}
	}
	if n == 0 {
		return fmt.Sprintf("%s was not called", tool)
	}
	return strings.Join(problems, "; ")
}

// seq renders a tool sequence for a detail message.
func seq(names []string) string {
	if len(names) == 0 {
		return "no tools"
	}
	return "[" + strings.Join(names, ", ") + "]"
}
