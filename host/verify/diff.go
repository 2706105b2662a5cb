package verify

import (
	"encoding/json"
	"sort"

	"github.com/assay-eval/assay/host/score"
)

// TurnDiff is how one task's turn changed between two runs.
type TurnDiff struct {
	Label string   `json:"label"`
	Old   *float64 `json:"old"` // turn score; null when unscored or missing
	New   *float64 `json:"new"`
	// ChangedChecks names ("source/name") every check whose result
	// (passed, score) differs, or that only one side has.
	ChangedChecks []string `json:"changed_checks"`
	// TagsGained and TagsLost are the failure tags only the new, or only
	// the old, turn carries.
	TagsGained []string `json:"tags_gained,omitempty"`
	TagsLost   []string `json:"tags_lost,omitempty"`
}

// changed reports whether anything about the turn differs.
func (d *TurnDiff) changed() bool {
	return !sameScore(d.Old, d.New) || len(d.ChangedChecks) > 0 || len(d.TagsGained) > 0 || len(d.TagsLost) > 0
}

// delta is new minus old; zero when either is absent.
func (d *TurnDiff) delta() float64 {
	if d.Old == nil || d.New == nil {
		return 0
	}
	return *d.New - *d.Old
}

func sameScore(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// diffTurns compares two runs' turn results task by task, in label order;
// every label either side has is listed.
func diffTurns(from, to []TurnResult) []TurnDiff {
	a, b := byLabel(from), byLabel(to)
	labels := unionKeys(a, b)
	out := make([]TurnDiff, 0, len(labels))
	for _, l := range labels {
		x, y := a[l], b[l]
		d := TurnDiff{Label: l, Old: x.TurnScore, New: y.TurnScore, ChangedChecks: changedChecks(x.Checks, y.Checks)}
		d.TagsGained, d.TagsLost = minus(y.FailureTags, x.FailureTags), minus(x.FailureTags, y.FailureTags)
		out = append(out, d)
	}
	return out
}

func byLabel(rs []TurnResult) map[string]TurnResult {
	m := make(map[string]TurnResult, len(rs))
	for _, r := range rs {
		m[r.Label] = r
	}
	return m
}

// changedChecks names the checks whose result differs, sorted.
func changedChecks(a, b []CheckResult) []string {
	key := func(c CheckResult) string { return c.Source + "/" + c.Name }
	am := make(map[string]CheckResult, len(a))
	for _, c := range a {
		am[key(c)] = c
	}
	out := []string{}
	seen := map[string]bool{}
	for _, c := range b {
		k := key(c)
		seen[k] = true
		if o, ok := am[k]; !ok || o.Passed != c.Passed || o.Score != c.Score {
			out = append(out, k)
		}
	}
	for k := range am {
		if !seen[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// minus is the sorted elements of a not in b.
func minus(a, b []string) []string {
	in := map[string]bool{}
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// gatesChanged names the gates that failed on one side only, sorted.
func gatesChanged(a, b score.Gates) []string {
	names := func(g score.Gates) []string {
		out := make([]string, len(g.Failed))
		for i, f := range g.Failed {
			out[i] = f.Gate
		}
		return out
	}
	out := append(minus(names(a), names(b)), minus(names(b), names(a))...)
	sort.Strings(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// storedSummary decodes a run's stored summary and verdict; zero values
// when the run never finished.
func storedSummary(sum, verdict json.RawMessage) (score.Summary, RunVerdict) {
	var s score.Summary
	var v RunVerdict
	if len(sum) > 0 {
		_ = json.Unmarshal(sum, &s) // an unreadable summary compares as empty
	}
	if len(verdict) > 0 {
		_ = json.Unmarshal(verdict, &v)
	}
	return s, v
}
