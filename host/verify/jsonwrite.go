package verify

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// The JSON assay hashes and records for every turn and task is written by
// hand here, byte for byte as encoding/json's json.Marshal writes the same
// values (docs/performance.md, "Verifying many small turns"): the tests
// compare the two on random values and fuzz them.

// appendTurnResult appends json.Marshal(r) to b and returns it with the
// spans of its "checks" and "failure_tags" values, which are
// json.Marshal(r.Checks) and json.Marshal(r.FailureTags) (capacity-clipped:
// an append copies). It reports false when r holds a number json.Marshal
// refuses (NaN, ±Inf).
func appendTurnResult(b []byte, r *TurnResult) (out, checks, tags []byte, ok bool) {
	ok = true
	b = append(b, `{"candidate":`...)
	b = appendJSONString(b, r.Candidate)
	b = append(b, `,"label":`...)
	b = appendJSONString(b, r.Label)
	b = append(b, `,"epoch":`...)
	b = strconv.AppendInt(b, int64(r.Epoch), 10)
	b = append(b, `,"persona":`...)
	b = appendJSONString(b, r.Persona)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, string(r.Status))
	b = append(b, `,"process_score":`...)
	b, ok = appendJSONFloatPtr(b, r.ProcessScore, ok)
	b = append(b, `,"kpi_score":`...)
	b, ok = appendJSONFloatPtr(b, r.KPIScore, ok)
	b = append(b, `,"turn_score":`...)
	b, ok = appendJSONFloatPtr(b, r.TurnScore, ok)
	b = append(b, `,"finalized":`...)
	b = strconv.AppendBool(b, r.Finalized)
	b = append(b, `,"error":`...)
	b = strconv.AppendBool(b, r.Error)
	b = append(b, `,"latency_s":`...)
	b, ok = appendJSONFloatPtr(b, r.LatencyS, ok)
	b = append(b, `,"tool_calls":`...)
	b = strconv.AppendInt(b, int64(r.ToolCalls), 10)
	b = append(b, `,"cost_usd":`...)
	b, ok = appendJSONFloatPtr(b, r.CostUSD, ok)
	b = append(b, `,"checks":`...)
	cs := len(b)
	b, ok = appendJSONList(b, r.Checks, ok, appendCheckResult)
	ce := len(b)
	b = append(b, `,"failure_tags":`...)
	ts := len(b)
	b = appendJSONStringsOrNull(b, r.FailureTags)
	te := len(b)
	b = append(b, `,"scorer":`...)
	b = appendScorerRef(b, r.Scorer.ID, r.Scorer.Version, r.Scorer.SHA256)
	if len(r.Diagnostics) > 0 {
		b = append(b, `,"diagnostics":`...)
		b = appendJSONStrings(b, r.Diagnostics)
	}
	if r.StateBefore != "" {
		b = append(b, `,"state_before_sha256":`...)
		b = appendJSONString(b, r.StateBefore)
	}
	if r.StateAfter != "" {
		b = append(b, `,"state_after_sha256":`...)
		b = appendJSONString(b, r.StateAfter)
	}
	b = append(b, '}')
	return b, b[cs:ce:ce], b[ts:te:te], ok
}

// turnResultSize is about the length of r's JSON, a little more when its
// strings need no escaping: the buffer appendTurnResult is given.
func turnResultSize(r *TurnResult) int {
	n := 320 + len(r.Candidate) + len(r.Label) + len(r.Persona) + len(r.Status) +
		len(r.Scorer.ID) + len(r.Scorer.Version) + len(r.Scorer.SHA256) + len(r.StateBefore) + len(r.StateAfter)
	for _, t := range r.FailureTags {
		n += 3 + len(t)
	}
	for _, d := range r.Diagnostics {
		n += 3 + len(d)
	}
	for i := range r.Checks {
		c := &r.Checks[i]
		n += 96 + len(c.Name) + len(c.Source) + len(c.Detail) + len(c.FailureTag)
		for _, e := range c.Evidence {
			n += 3 + len(e)
		}
	}
	return n
}

func appendCheckResult(b []byte, c *CheckResult, ok bool) ([]byte, bool) {
	b = append(b, `{"name":`...)
	b = appendJSONString(b, c.Name)
	b = append(b, `,"source":`...)
	b = appendJSONString(b, c.Source)
	b = append(b, `,"score":`...)
	b, ok = appendJSONFloat(b, c.Score, ok)
	b = append(b, `,"passed":`...)
	b = strconv.AppendBool(b, c.Passed)
	b = append(b, `,"detail":`...)
	b = appendJSONString(b, c.Detail)
	if c.FailureTag != "" {
		b = append(b, `,"failure_tag":`...)
		b = appendJSONString(b, c.FailureTag)
	}
	if len(c.Evidence) > 0 {
		b = append(b, `,"evidence":`...)
		b = appendJSONStrings(b, c.Evidence)
	}
	return append(b, '}'), ok
}

// appendScorerRef appends a scorerStub or ScorerRef as json.Marshal writes
// either.
func appendScorerRef(b []byte, id, version, sha string) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"version":`...)
	b = appendJSONString(b, version)
	b = append(b, `,"sha256":`...)
	b = appendJSONString(b, sha)
	return append(b, '}')
}

// appendMetricsRow appends json.Marshal(*m) to b. It reports false, and b
// is to be dropped, when m holds what it leaves to json.Marshal: a NaN or
// infinite number, or a time outside the years and offsets
// appendJSONTime writes.
func appendMetricsRow(b []byte, m *turnMetrics) ([]byte, bool) {
	ok := true
	b = append(b, `{"candidate":`...)
	b = appendJSONString(b, m.Candidate)
	b = append(b, `,"label":`...)
	b = appendJSONString(b, m.Label)
	b = append(b, `,"persona":`...)
	b = appendJSONString(b, m.Persona)
	b = append(b, `,"latency_s":`...)
	b, ok = appendJSONFloatPtr(b, m.LatencyS, ok)
	b = append(b, `,"cost_usd":`...)
	b, ok = appendJSONFloatPtr(b, m.CostUSD, ok)
	b = append(b, `,"started_at":`...)
	b, ok = appendJSONTime(b, m.StartedAt, ok)
	b = append(b, `,"finished_at":`...)
	b, ok = appendJSONTime(b, m.FinishedAt, ok)
	return append(b, '}'), ok
}

// appendJSONTime appends t as time.Time's MarshalJSON writes it (RFC 3339
// with nanoseconds, quoted) for the years 0–9999 and zone offsets of less
// than a day; ok becomes false for any other time, which MarshalJSON may
// refuse.
func appendJSONTime(b []byte, t time.Time, ok bool) ([]byte, bool) {
	_, off := t.Zone()
	if y := t.Year(); y < 0 || y > 9999 || off <= -24*60*60 || off >= 24*60*60 {
		return b, false
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), ok
}

// appendJSONString appends s as json.Marshal writes it: a string of
// printable ASCII without a character encoding/json escapes as it is, any
// other through json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendJSONStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONList appends xs as json.Marshal writes a slice, each element
// by elem: null for a nil slice, else an array. ok is as elem leaves it.
func appendJSONList[T any](b []byte, xs []T, ok bool, elem func([]byte, *T, bool) ([]byte, bool)) ([]byte, bool) {
	if xs == nil {
		return append(b, "null"...), ok
	}
	b = append(b, '[')
	for i := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b, ok = elem(b, &xs[i], ok)
	}
	return append(b, ']'), ok
}

// appendJSONStringsOrNull is appendJSONStrings, or null for a nil slice,
// as json.Marshal writes a []string.
func appendJSONStringsOrNull(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	return appendJSONStrings(b, ss)
}

// appendJSONFloatPtr is appendJSONFloat of *f, or null for nil.
func appendJSONFloatPtr(b []byte, f *float64, ok bool) ([]byte, bool) {
	if f == nil {
		return append(b, "null"...), ok
	}
	return appendJSONFloat(b, *f, ok)
}

// appendJSONFloat appends f as json.Marshal writes a float64: in the range
// where it uses strconv's shortest 'f' form, that; otherwise through
// json.Marshal. ok becomes false for NaN and ±Inf, which json.Marshal
// refuses.
func appendJSONFloat(b []byte, f float64, ok bool) ([]byte, bool) {
	if a := math.Abs(f); a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.AppendFloat(b, f, 'f', -1, 64), ok
	}
	q, err := json.Marshal(f)
	if err != nil {
		return b, false
	}
	return append(b, q...), ok
}
