package kpi

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// evalExpr compiles and evaluates src against the test turn and state.
func evalExpr(t *testing.T, src string) (any, error) {
	t.Helper()
	c := NewChecker()
	e, ds := c.Compile(src, TextPos("expr", src))
	if ds != nil {
		t.Fatalf("Compile(%q) = %v, want no diagnostics", src, ds)
	}
	act, err := NewActivation(testTask(), Input{Turn: testTurn(), State: testState()})
	if err != nil {
		t.Fatalf("NewActivation: %v", err)
	}
	v, _, err := e.Eval(context.Background(), act)
	if err != nil {
		return nil, err
	}
	return v.Value(), nil
}

func TestHelpers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want any
	}{
		// in_order: the second list is a subsequence of the first.
		{"in_order(turn.tools, ['memory_search', 'finalize_response'])", true},
		{"in_order(turn.tools, ['create_task', 'memory_search'])", false},
		{"in_order(turn.tools, [])", true},
		{"in_order([], ['a'])", false},
		{"in_order(['a', 'b', 'a'], ['a', 'a'])", true},
		{"in_order(['a', 'b'], ['a', 'a'])", false},
		// keywords_ratio: case-insensitive substring fraction; 1 for no keywords.
		{"keywords_ratio(turn.answer, ['INVOICE', 'bob'])", 1.0},
		{"keywords_ratio(turn.answer, ['invoice', 'nope'])", 0.5},
		{"keywords_ratio('', ['a'])", 0.0},
		{"keywords_ratio('abc', [])", 1.0},
		// sum and mean.
		{"sum([1.5, 2.5])", 4.0},
		{"sum([1, 2, 3])", int64(6)},
		{"sum(turn.tool_calls.map(c, size(c.args)))", int64(3)},
		{"sum([]) == 0.0", true},
		{"mean([1.0, 0.0, 0.5, 0.5])", 0.5},
		{"mean([1, 2])", 1.5},
		{"mean(state.tasks.map(t, t.priority))", 3.0},
		// count_tool over names or over calls.
		{"count_tool(turn.tools, 'create_task')", int64(1)},
		{"count_tool(turn.tool_calls, 'memory_search')", int64(1)},
		{"count_tool(turn.tool_calls, 'nope')", int64(0)},
		{"count_tool(['a', 'a', 'b'], 'a')", int64(2)},
		// The libraries that are on.
		{"turn.answer.lowerAscii().contains('invoice')", true},
		{"turn.answer.matches('(?i)due (monday|friday)')", true},
		{"sets.contains(turn.tools, ['create_task'])", true},
		{"turn.tools.distinct().size()", int64(3)},
		{"math.greatest([1.0, 0.4])", 1.0},
		{"cel.bind(n, size(turn.tools), n * 2)", int64(6)},
		{"turn.tool_calls[?5].hasValue()", false},
		{"turn.tool_calls.exists(i, c, i == 1 && c.name == 'create_task')", true},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			got, err := evalExpr(t, tt.expr)
			if err != nil {
				t.Fatalf("Eval(%q) error: %v", tt.expr, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Eval(%q) mismatch (-want +got):\n%s", tt.expr, diff)
			}
		})
	}
}

func TestHelperErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want string
	}{
		{"mean(turn.events.filter(e, false).map(e, 1.0)) > 0.0", "mean of an empty list"},
		{"mean(turn.tool_calls.filter(c, false).map(c, 1)) > 0.0", "mean of an empty list"},
		{"sum([-9223372036854775807, -2]) < 0", "integer overflow"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			_, err := evalExpr(t, tt.expr)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Eval(%q) error = %v, want one containing %q", tt.expr, err, tt.want)
			}
		})
	}
}

func TestIsSubsequence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		seq, want []string
		ok        bool
	}{
		{nil, nil, true},
		{[]string{"a"}, nil, true},
		{nil, []string{"a"}, false},
		{[]string{"x", "a", "y", "b"}, []string{"a", "b"}, true},
		{[]string{"b", "a"}, []string{"a", "b"}, false},
	}
	for _, tt := range tests {
		if got := isSubsequence(tt.seq, tt.want); got != tt.ok {
			t.Errorf("isSubsequence(%q, %q) = %v, want %v", tt.seq, tt.want, got, tt.ok)
		}
	}
}
