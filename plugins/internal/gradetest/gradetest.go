package gradetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assay-eval/assay/sdk"
)

// Check is the part of a check a table compares. Detail is a substring the
// check's detail must contain.
type Check struct {
	KPI    string
	Score  float64
	Passed bool
	Tag    string
	Detail string
}

// Want is what a table row expects of a result.
type Want struct {
	Score  float64
	Checks []Check
	Tags   []string
	// Diag is a substring one of the diagnostics must contain; "" wants none.
	Diag string
}

// KPIs encodes KPI values written as Go values.
func KPIs(t testing.TB, kpis map[string]any) map[string]json.RawMessage {
	t.Helper()
	raw := make(map[string]json.RawMessage, len(kpis))
	for k, v := range kpis {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("encoding kpi %s: %v", k, err)
		}
		raw[k] = b
	}
	return raw
}

// Compare reports through t every way r differs from w.
func Compare(t testing.TB, r *sdk.Result, w Want) {
	t.Helper()
	approx := cmpopts.EquateApprox(0, 1e-9)
	if !cmp.Equal(w.Score, r.Score, approx) {
		t.Errorf("Score() score = %v, want %v", r.Score, w.Score)
	}
	got := make([]Check, len(r.Checks))
	for i, c := range r.Checks {
		got[i] = Check{KPI: c.KPI, Score: c.Score, Passed: c.Passed, Tag: c.FailureTag, Detail: c.Detail}
		if i < len(w.Checks) {
			if !strings.Contains(c.Detail, w.Checks[i].Detail) {
				t.Errorf("Score() check %s detail = %q, want it to contain %q", c.KPI, c.Detail, w.Checks[i].Detail)
			}
			got[i].Detail = w.Checks[i].Detail
		}
	}
	if diff := cmp.Diff(w.Checks, got, approx, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Score() checks mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(w.Tags, r.FailureTags, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Score() failure tags = %q, want %q", r.FailureTags, w.Tags)
	}
	switch joined := strings.Join(r.Diagnostics, "\n"); {
	case w.Diag == "" && len(r.Diagnostics) > 0:
		t.Errorf("Score() diagnostics = %q, want none", r.Diagnostics)
	case w.Diag != "" && !strings.Contains(joined, w.Diag):
		t.Errorf("Score() diagnostics = %q, want one containing %q", r.Diagnostics, w.Diag)
	}
	for _, c := range r.Checks {
		if c.Passed != (c.Score >= 1) {
			t.Errorf("Score() check %s passed = %t with score %v", c.KPI, c.Passed, c.Score)
		}
		if c.Passed && c.FailureTag != "" {
			t.Errorf("Score() passed check %s carries failure tag %q", c.KPI, c.FailureTag)
		}
	}
}

// CheckDescription reports through t a description that differs from the
// wanted id, version "1.0.0" and KPI value types, lacks a KPI description or
// a failure tag from tags, or shares its slices between callers.
func CheckDescription(t testing.TB, s sdk.Scorer, id sdk.ID, types map[string]sdk.ValueType, tags map[string]string) {
	t.Helper()
	d := s.Describe()
	if d.ID != id || d.Version != "1.0.0" {
		t.Errorf("Describe() = %s %s, want %s 1.0.0", d.ID, d.Version, id)
	}
	gotTypes := map[string]sdk.ValueType{}
	gotTags := map[string]string{}
	for _, k := range d.KPIs {
		gotTypes[k.Key] = k.ValueType
		if k.FailureTag != "" {
			gotTags[k.Key] = k.FailureTag
		}
		if k.Description == "" || strings.Contains(k.Description, "\n") {
			t.Errorf("Describe() KPI %s description = %q, want one line", k.Key, k.Description)
		}
	}
	if diff := cmp.Diff(types, gotTypes, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Describe() KPI types mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tags, gotTags, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Describe() failure tags mismatch (-want +got):\n%s", diff)
	}
	if len(d.KPIs) > 0 {
		d.KPIs[0].Key = "changed"
		if s.Describe().KPIs[0].Key == "changed" {
			t.Errorf("Describe() shares its KPI slice between callers")
		}
	}
}

// Conformance appends to sdktest's generic cases for s the given cases,
// with ids made unique.
func Conformance(generic []*sdk.Case, cases ...*sdk.Case) []*sdk.Case {
	all := append(generic, cases...)
	for i, c := range all {
		c.ID = fmt.Sprintf("%s#%d", c.ID, i)
	}
	return all
}
