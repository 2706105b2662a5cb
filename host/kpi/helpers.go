package kpi

import (
	"errors"
	"math"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/assay-eval/assay/pkg/trace"
)

// Overload IDs of the helpers (also the keys of their cost models).
const (
	idInOrder          = "in_order_list_string_list_string"
	idKeywordsRatio    = "keywords_ratio_string_list_string"
	idSumDouble        = "sum_list_double"
	idSumInt           = "sum_list_int"
	idMeanDouble       = "mean_list_double"
	idMeanInt          = "mean_list_int"
	idCountToolStrings = "count_tool_list_string_string"
	idCountToolCalls   = "count_tool_list_tool_call_string"
)

// Errors the helpers return at run time; a check that hits one scores 0.
var (
	ErrEmptyMean   = errors.New("mean of an empty list")
	ErrIntOverflow = errors.New("integer overflow")
)

var (
	listString   = cel.ListType(cel.StringType)
	listDouble   = cel.ListType(cel.DoubleType)
	listInt      = cel.ListType(cel.IntType)
	listToolCall = cel.ListType(cel.ObjectType("sdk.ToolCall"))
)

// helpers declares the assay helper functions and their cost models. Every
// helper is linear in the size of its arguments, and its cost model says so,
// so the load-time estimate and the run-time cost both account for it.
func helpers() []cel.EnvOption {
	linear := func(id string) cost.OverloadModel {
		return cost.Overload(id, cost.EvalCost(cost.Sum(cost.Const(cost.CallCost), cost.Length(cost.Arg(0)))))
	}
	return []cel.EnvOption{
		// in_order(seq, want): want is a subsequence of seq.
		cel.Function("in_order",
			cel.Overload(idInOrder, []*cel.Type{listString, listString}, cel.BoolType,
				cel.BinaryBinding(inOrder))),
		// keywords_ratio(text, keywords): the fraction of keywords found in text,
		// case-insensitively, as substrings; 1.0 for no keywords.
		cel.Function("keywords_ratio",
			cel.Overload(idKeywordsRatio, []*cel.Type{cel.StringType, listString}, cel.DoubleType,
				cel.BinaryBinding(keywordsRatio))),
		cel.Function("sum",
			cel.Overload(idSumDouble, []*cel.Type{listDouble}, cel.DoubleType, cel.UnaryBinding(sumDouble)),
			cel.Overload(idSumInt, []*cel.Type{listInt}, cel.IntType, cel.UnaryBinding(sumInt))),
		cel.Function("mean",
			cel.Overload(idMeanDouble, []*cel.Type{listDouble}, cel.DoubleType, cel.UnaryBinding(meanDouble)),
			cel.Overload(idMeanInt, []*cel.Type{listInt}, cel.DoubleType, cel.UnaryBinding(meanInt))),
		// count_tool(turn.tools or turn.tool_calls, name): how many calls of the tool.
		cel.Function("count_tool",
			cel.Overload(idCountToolStrings, []*cel.Type{listString, cel.StringType}, cel.IntType,
				cel.BinaryBinding(countToolStrings)),
			cel.Overload(idCountToolCalls, []*cel.Type{listToolCall, cel.StringType}, cel.IntType,
				cel.BinaryBinding(countToolCalls))),
		cel.CostModel(
			cost.Overload(idInOrder, cost.EvalCost(cost.Sum(cost.Const(cost.CallCost),
				cost.Length(cost.Arg(0)), cost.Length(cost.Arg(1))))),
			// Lower-casing and scanning the text once per keyword.
			cost.Overload(idKeywordsRatio, cost.EvalCost(cost.Mul(
				cost.Sum(cost.Const(cost.CallCost), cost.StringScan(cost.Arg(0))),
				cost.AtLeastOneQuantity(cost.Length(cost.Arg(1)))))),
			linear(idSumDouble), linear(idSumInt), linear(idMeanDouble), linear(idMeanInt),
			linear(idCountToolStrings), linear(idCountToolCalls),
			// cel-go models no result size for scalar-to-string conversions, so
			// 'n=' + string(n) would estimate as unbounded; bound them.
			fixedString(overloads.BoolToString, 5), fixedString(overloads.IntToString, 20),
			fixedString(overloads.UintToString, 20), fixedString(overloads.DoubleToString, 32),
			fixedString(overloads.TimestampToString, 40), fixedString(overloads.DurationToString, 32),
		),
	}
}

// fixedString models a conversion whose result is at most n characters.
func fixedString(id string, n uint64) cost.OverloadModel {
	return cost.Overload(id, cost.EvalCost(cost.Const(cost.CallCost)), cost.ResultSize(cost.AtMost(cost.Const(n))))
}

// stringsOf returns the Go strings of a CEL list(string) without copying
// when the list wraps a []string.
func stringsOf(v ref.Val) ([]string, ref.Val) {
	if s, ok := v.Value().([]string); ok {
		return s, nil
	}
	l, ok := v.(traits.Lister)
	if !ok {
		return nil, types.MaybeNoSuchOverloadErr(v)
	}
	var out []string
	for it := l.Iterator(); it.HasNext() == types.True; {
		e := it.Next()
		s, ok := e.(types.String)
		if !ok {
			return nil, types.MaybeNoSuchOverloadErr(e)
		}
		out = append(out, string(s))
	}
	return out, nil
}

func inOrder(seq, want ref.Val) ref.Val {
	s, errv := stringsOf(seq)
	if errv != nil {
		return errv
	}
	w, errv := stringsOf(want)
	if errv != nil {
		return errv
	}
	return types.Bool(isSubsequence(s, w))
}

// isSubsequence reports whether want appears in seq in order, not
// necessarily contiguously.
func isSubsequence(seq, want []string) bool {
	i := 0
	for _, s := range seq {
		if i == len(want) {
			break
		}
		if s == want[i] {
			i++
		}
	}
	return i == len(want)
}

func keywordsRatio(text, keywords ref.Val) ref.Val {
	t, ok := text.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(text)
	}
	kws, errv := stringsOf(keywords)
	if errv != nil {
		return errv
	}
	return types.Double(fractionFound(string(t), kws))
}

// fractionFound is the fraction of keywords that occur in text, ignoring
// case; 1 when there are no keywords.
func fractionFound(text string, keywords []string) float64 {
	if len(keywords) == 0 {
		return 1
	}
	lower := strings.ToLower(text)
	found := 0
	for _, k := range keywords {
		if strings.Contains(lower, strings.ToLower(k)) {
			found++
		}
	}
	return float64(found) / float64(len(keywords))
}

// eachElem calls fn with every element of a list value.
func eachElem(v ref.Val, fn func(ref.Val) ref.Val) ref.Val {
	l, ok := v.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	for it := l.Iterator(); it.HasNext() == types.True; {
		if errv := fn(it.Next()); errv != nil {
			return errv
		}
	}
	return nil
}

func sumDouble(v ref.Val) ref.Val {
	total, _, errv := doubles(v)
	if errv != nil {
		return errv
	}
	return types.Double(total)
}

func meanDouble(v ref.Val) ref.Val {
	total, n, errv := doubles(v)
	if errv != nil {
		return errv
	}
	if n == 0 {
		return types.WrapErr(ErrEmptyMean)
	}
	return types.Double(total / float64(n))
}

func doubles(v ref.Val) (float64, int, ref.Val) {
	if s, ok := v.Value().([]float64); ok {
		var total float64
		for _, x := range s {
			total += x
		}
		return total, len(s), nil
	}
	var total float64
	n := 0
	errv := eachElem(v, func(e ref.Val) ref.Val {
		d, ok := e.(types.Double)
		if !ok {
			return types.MaybeNoSuchOverloadErr(e)
		}
		total += float64(d)
		n++
		return nil
	})
	return total, n, errv
}

func sumInt(v ref.Val) ref.Val {
	total, _, errv := ints(v)
	if errv != nil {
		return errv
	}
	return types.Int(total)
}

func meanInt(v ref.Val) ref.Val {
	total, n, errv := ints(v)
	if errv != nil {
		return errv
	}
	if n == 0 {
		return types.WrapErr(ErrEmptyMean)
	}
	return types.Double(float64(total) / float64(n))
}

func ints(v ref.Val) (int64, int, ref.Val) {
	var total int64
	n := 0
	errv := eachElem(v, func(e ref.Val) ref.Val {
		i, ok := e.(types.Int)
		if !ok {
			return types.MaybeNoSuchOverloadErr(e)
		}
		if (i > 0 && total > math.MaxInt64-int64(i)) || (i < 0 && total < math.MinInt64-int64(i)) {
			return types.WrapErr(ErrIntOverflow)
		}
		total += int64(i)
		n++
		return nil
	})
	return total, n, errv
}

func countToolStrings(list, name ref.Val) ref.Val {
	n, ok := name.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(name)
	}
	names, errv := stringsOf(list)
	if errv != nil {
		return errv
	}
	count := 0
	for _, s := range names {
		if s == string(n) {
			count++
		}
	}
	return types.Int(count)
}

func countToolCalls(list, name ref.Val) ref.Val {
	n, ok := name.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(name)
	}
	if calls, ok := list.Value().([]trace.ToolCall); ok {
		count := 0
		for i := range calls {
			if calls[i].Name == string(n) {
				count++
			}
		}
		return types.Int(count)
	}
	count := 0
	errv := eachElem(list, func(e ref.Val) ref.Val {
		switch c := e.Value().(type) {
		case trace.ToolCall:
			if c.Name == string(n) {
				count++
			}
		case *trace.ToolCall:
			if c.Name == string(n) {
				count++
			}
		default:
			return types.MaybeNoSuchOverloadErr(e)
		}
		return nil
	})
	if errv != nil {
		return errv
	}
	return types.Int(count)
}
