package grade

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/excerpt"
)

// Sheet collects the checks and diagnostics of one case. The failure tag of
// every check comes from the scorer's description, so Describe and the checks
// can never disagree.
type Sheet struct {
	desc   sdk.Description
	task   *sdk.Task
	checks []sdk.Check
	diags  []string
}

// NewSheet starts the sheet of one case of task t for the scorer described by d.
func NewSheet(d sdk.Description, t *sdk.Task) *Sheet {
	return &Sheet{desc: d, task: t, checks: []sdk.Check{}}
}

// Has reports whether the task sets KPI key k.
func (s *Sheet) Has(k string) bool {
	_, ok := s.task.KPIs[k]
	return ok
}

// Tag is the failure tag the description gives KPI key k ("" when none).
func (s *Sheet) Tag(k string) string {
	for _, kpi := range s.desc.KPIs {
		if kpi.Key == k {
			return kpi.FailureTag
		}
	}
	return ""
}

// Diag records a diagnostic: a problem with the case's input.
func (s *Sheet) Diag(format string, args ...any) {
	s.diags = append(s.diags, fmt.Sprintf(format, args...))
}

// Pass records a passed check of KPI key k.
func (s *Sheet) Pass(k, detail string, evidence ...string) {
	s.Score(k, 1, detail, evidence...)
}

// Fail records a failed check of KPI key k, scored 0.
func (s *Sheet) Fail(k, detail string, evidence ...string) {
	s.Score(k, 0, detail, evidence...)
}

// Verdict records a pass or a fail of KPI key k.
func (s *Sheet) Verdict(k string, ok bool, detail string, evidence ...string) {
	if ok {
		s.Pass(k, detail, evidence...)
		return
	}
	s.Fail(k, detail, evidence...)
}

func bound(s string) string {
	b, _ := excerpt.Bound(s)
	return b
}

// Score records a check of KPI key k with partial credit score, clamped to
// [0,1]; it passes only at 1. A failed check carries k's failure tag.
func (s *Sheet) Score(k string, score float64, detail string, evidence ...string) {
	score = Clamp(score)
	// Details and evidence stay within the excerpt bound the host checks
	// (docs/plugins.md, "Contract checks on results").
	c := sdk.Check{KPI: k, Score: score, Passed: score >= 1, Detail: bound(detail)}
	for _, e := range evidence {
		c.Evidence = append(c.Evidence, bound(e))
	}
	if !c.Passed {
		c.FailureTag = s.Tag(k)
	}
	s.checks = append(s.checks, c)
}

// Clamp limits score x to [0,1]; NaN counts as 0.
func Clamp(x float64) float64 {
	switch {
	case math.IsNaN(x) || x < 0:
		return 0
	case x > 1:
		return 1
	}
	return x
}

// Checks returns the checks recorded so far.
func (s *Sheet) Checks() []sdk.Check { return s.checks }

// Result is the mean of the checks, the sorted unique failure tags of the
// failed ones, and the diagnostics. A sheet without checks scores 0 and says
// why in a diagnostic.
func (s *Sheet) Result() *sdk.Result {
	r := &sdk.Result{Checks: s.checks, Diagnostics: s.diags}
	if len(s.checks) == 0 {
		keys := make([]string, 0, len(s.desc.KPIs))
		for _, kpi := range s.desc.KPIs {
			keys = append(keys, kpi.Key)
		}
		r.Diagnostics = append(r.Diagnostics, fmt.Sprintf(
			"nothing to check: task %q sets none of the KPI keys %s checks (%s)",
			s.task.Label, s.desc.ID, strings.Join(keys, ", ")))
		return r
	}
	var sum float64
	for _, c := range s.checks {
		sum += c.Score
		if !c.Passed && c.FailureTag != "" {
			r.FailureTags = append(r.FailureTags, c.FailureTag)
		}
	}
	r.Score = sum / float64(len(s.checks))
	slices.Sort(r.FailureTags)
	r.FailureTags = slices.Compact(r.FailureTags)
	return r
}

// value decodes KPI key k. It reports false when the task does not set k or
// the value is not valid JSON; the latter is a diagnostic and a failed check.
func (s *Sheet) value(k string) (any, bool) {
	raw, ok := s.task.KPIs[k]
	if !ok {
		return nil, false
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		s.unusable(k, "valid JSON", fmt.Sprintf("%q (%v)", raw, err))
		return nil, false
	}
	return v, true
}

// unusable records a KPI value of the wrong type: a diagnostic, and a failed
// check so the task's score shows it.
func (s *Sheet) unusable(k, want, got string) {
	msg := fmt.Sprintf("kpi %s: want %s, got %s", k, want, got)
	s.Diag("%s", msg)
	s.Fail(k, msg+"; the check cannot run")
}

// Bool reads bool KPI key k.
func (s *Sheet) Bool(k string) (bool, bool) {
	v, ok := s.value(k)
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		s.unusable(k, "true or false", kind(v))
	}
	return b, ok
}

// Number reads number KPI key k.
func (s *Sheet) Number(k string) (float64, bool) {
	v, ok := s.value(k)
	if !ok {
		return 0, false
	}
	f, ok := v.(float64)
	if !ok {
		s.unusable(k, "a number", kind(v))
	}
	return f, ok
}

// Integer reads integer KPI key k (a whole number).
func (s *Sheet) Integer(k string) (int, bool) {
	v, ok := s.value(k)
	if !ok {
		return 0, false
	}
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		s.unusable(k, "a whole number", kind(v))
		return 0, false
	}
	return int(f), true
}

// String reads string KPI key k.
func (s *Sheet) String(k string) (string, bool) {
	v, ok := s.value(k)
	if !ok {
		return "", false
	}
	str, ok := v.(string)
	if !ok {
		s.unusable(k, "a string", kind(v))
	}
	return str, ok
}

// StringList reads string_list KPI key k.
func (s *Sheet) StringList(k string) ([]string, bool) {
	v, ok := s.value(k)
	if !ok {
		return nil, false
	}
	list, ok := stringList(v)
	if !ok {
		s.unusable(k, "a list of strings", kind(v))
	}
	return list, ok
}

// StringListMap reads string_list_map KPI key k.
func (s *Sheet) StringListMap(k string) (map[string][]string, bool) {
	v, ok := s.value(k)
	if !ok {
		return nil, false
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		s.unusable(k, "a map of lists of strings", kind(v))
		return nil, false
	}
	out := make(map[string][]string, len(m))
	for name, lv := range m {
		list, ok := stringList(lv)
		if !ok {
			s.unusable(k, "a map of lists of strings", fmt.Sprintf("%s for %q", kind(lv), name))
			return nil, false
		}
		out[name] = list
	}
	return out, true
}

func stringList(v any) ([]string, bool) {
	items, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		str, ok := it.(string)
		if !ok {
			return nil, false
		}
		out = append(out, str)
	}
	return out, true
}

// kind names the JSON type of v for a diagnostic.
func kind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("a bool (%t)", x)
	case float64:
		return fmt.Sprintf("a number (%v)", x)
	case string:
		return fmt.Sprintf("a string (%q)", x)
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	}
	return fmt.Sprintf("%T", v)
}
