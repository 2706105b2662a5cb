package scorerpb

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/assay-eval/assay/sdk"
)

// The plugin writes its ScoreResponse straight from the results
// (AppendResult) and the host reads it straight into results
// (UnmarshalResults), as the request is written and read (MarshalCases,
// UnmarshalCases): the same protocol-1 bytes as ResultToProto and
// proto.Marshal, and the same results as proto.Unmarshal and
// ResultFromProto, without the intermediate messages.

// AppendResult appends one entry of a ScoreResponse's results: the bytes
// proto.Marshal writes for ResultToProto(caseID, r, err). ok is false when
// a string is not valid UTF-8, which the generated marshaller refuses; the
// caller then sends the generated message, to fail as it always did.
func AppendResult(b []byte, caseID string, r *sdk.Result, err error) ([]byte, bool) {
	return AppendResultFor(b, RequestOptions{}, caseID, r, err)
}

// RequestOptions is what a ScoreRequest says about how it may be answered
// (UnmarshalRequest reads it, AppendRequestOptions writes it).
type RequestOptions struct {
	// ReadsEvidenceFrom: the host reads Check.evidence_from, so a check's
	// evidence that repeats an earlier check's may be sent as a reference
	// (docs/protocol.md, "Performance").
	ReadsEvidenceFrom bool
}

// AppendRequestOptions appends o's fields to the ScoreRequest in b (written
// by MarshalCases or MarshalCasesFor): a host that reads what o announces
// says so.
func AppendRequestOptions(b []byte, o RequestOptions) []byte {
	return appendBool(b, 3, o.ReadsEvidenceFrom)
}

// maxEvidenceFrom bounds how many earlier checks a check's evidence is
// compared with, so that a result of many checks costs linear time.
const maxEvidenceFrom = 8

// evidenceFrom is 1 + the index of the first of the (at most
// maxEvidenceFrom) checks before checks[i] whose evidence equals its own,
// or 0 when there is none or it has no evidence.
func evidenceFrom(checks []sdk.Check, i int) int {
	ev := checks[i].Evidence
	if len(ev) == 0 {
		return 0
	}
	for j := max(0, i-maxEvidenceFrom); j < i; j++ {
		if slices.Equal(checks[j].Evidence, ev) {
			return j + 1
		}
	}
	return 0
}

// AppendResultFor is AppendResult answering a request that said o: with
// o.ReadsEvidenceFrom, a check whose evidence equals an earlier check's
// carries evidence_from instead of the strings, which UnmarshalResults
// reads back to the same result.
func AppendResultFor(b []byte, o RequestOptions, caseID string, r *sdk.Result, err error) ([]byte, bool) {
	if err != nil || r == nil {
		msg := "scorer returned no result"
		if err != nil {
			if msg = err.Error(); msg == "" {
				msg = "scorer failed"
			}
		}
		if !utf8.ValidString(caseID) || !utf8.ValidString(msg) {
			return b, false
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b, _ = nested(b, func(b []byte) ([]byte, error) {
			b = appendStr(b, 1, caseID)
			return appendStr(b, 6, msg), nil
		})
		return b, true
	}
	valid := utf8.ValidString(caseID)
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b, _ = nested(b, func(b []byte) ([]byte, error) {
		b = appendStr(b, 1, caseID)
		b = appendDouble(b, 2, r.Score)
		for i := range r.Checks {
			c := &r.Checks[i]
			valid = valid && utf8.ValidString(c.KPI) && utf8.ValidString(c.Detail) && utf8.ValidString(c.FailureTag)
			b = protowire.AppendTag(b, 3, protowire.BytesType)
			b, _ = nested(b, func(b []byte) ([]byte, error) {
				b = appendStr(b, 1, c.KPI)
				b = appendDouble(b, 2, c.Score)
				b = appendBool(b, 3, c.Passed)
				b = appendStr(b, 4, c.Detail)
				from := 0
				if o.ReadsEvidenceFrom {
					from = evidenceFrom(r.Checks, i)
				}
				if from == 0 {
					b, valid = appendStrings(b, 5, c.Evidence, valid)
				}
				b = appendStr(b, 6, c.FailureTag)
				return appendVarint(b, 7, uint64(from)), nil
			})
		}
		b, valid = appendStrings(b, 4, r.FailureTags, valid)
		b, valid = appendStrings(b, 5, r.Diagnostics, valid)
		return b, nil
	})
	return b, valid
}

// appendStrings appends a repeated string field, every element (empty ones
// too), and ands valid with whether they are all UTF-8.
func appendStrings(b []byte, num protowire.Number, ss []string, valid bool) ([]byte, bool) {
	for _, s := range ss {
		valid = valid && utf8.ValidString(s)
		b = protowire.AppendTag(b, num, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	return b, valid
}

// appendDouble appends a proto3 double, left out when it is +0.
func appendDouble(b []byte, num protowire.Number, f float64) []byte {
	if math.Float64bits(f) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(f))
}

// WireResult is one entry of a ScoreResponse as UnmarshalResults reads it:
// the case it answers, and the result or the scorer's error.
type WireResult struct {
	CaseID string
	Result *sdk.Result
	Err    error
}

// UnmarshalResults reads the protobuf bytes of a ScoreResponse: what
// proto.Unmarshal followed by ResultFromProto gives for each result. The
// short strings that repeat across a response (KPI keys, failure tags,
// evidence such as tool names) are shared within it, as the plugin shares
// a request's (fastDecoder.name), and each repeated field's slice is
// allocated once at its size.
func UnmarshalResults(b []byte) ([]WireResult, error) {
	n, err := count(b, 1)
	if err != nil {
		return nil, err
	}
	out := make([]WireResult, 0, n)
	rd := resultReader{names: newNameTable()}
	slab := make([]sdk.Result, n) // one allocation for the response's results
	err = eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		w, err := rd.result(v, &slab[len(out)])
		if err != nil {
			return fmt.Errorf("reading result %d: %w", len(out), err)
		}
		out = append(out, w)
		return nil
	})
	if len(out) == 0 {
		out = nil
	}
	return out, err
}

// resultReader holds what one response's results share: the names, and
// the scratch a result is read into (in one pass over its fields) before
// it is copied into slices of its own, each allocated once at its size.
type resultReader struct {
	names nameTable
	// The result being read: its checks, the end of each check's evidence
	// in ev, its evidence, failure tags and diagnostics.
	checks      []sdk.Check
	ends        []int
	ev          []string
	tags, diags []string
}

// name is str for a short value that repeats across the response.
func (rd *resultReader) name(v []byte) (string, error) {
	if len(v) > maxShared {
		return str(v)
	}
	return rd.names.share(v)
}

// count is the number of length-delimited fields num in message b.
func count(b []byte, num protowire.Number) (int, error) {
	n := 0
	err := eachField(b, func(m protowire.Number, typ protowire.Type, _ []byte, _ uint64) error {
		if m == num && typ == protowire.BytesType {
			n++
		}
		return nil
	})
	return n, err
}

// result reads one result into r, which it returns unless the result is
// an error. The evidence of all its checks shares one slice, each check's
// capped at its length, so that appending to one check's evidence cannot
// change the next one's.
func (rd *resultReader) result(b []byte, r *sdk.Result) (WireResult, error) {
	var w WireResult
	var msg string
	rd.checks, rd.ends, rd.ev = rd.checks[:0], rd.ends[:0], rd.ev[:0]
	rd.tags, rd.diags = rd.tags[:0], rd.diags[:0]
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		var err error
		var s string
		switch {
		case num == 1 && typ == protowire.BytesType:
			w.CaseID, err = str(v)
		case num == 2 && typ == protowire.Fixed64Type:
			r.Score = math.Float64frombits(x)
		case num == 3 && typ == protowire.BytesType:
			err = rd.check(v)
		case num == 4 && typ == protowire.BytesType:
			s, err = rd.name(v)
			rd.tags = append(rd.tags, s)
		case num == 5 && typ == protowire.BytesType:
			s, err = str(v)
			rd.diags = append(rd.diags, s)
		case num == 6 && typ == protowire.BytesType:
			msg, err = str(v)
		}
		return err
	})
	if err != nil {
		return w, err
	}
	if msg != "" {
		w.Err = errors.New(msg)
		return w, nil
	}
	r.Checks = make([]sdk.Check, len(rd.checks))
	copy(r.Checks, rd.checks)
	if len(rd.ev) > 0 {
		ev := make([]string, len(rd.ev))
		copy(ev, rd.ev)
		start := 0
		for i, end := range rd.ends {
			if end > start {
				r.Checks[i].Evidence = ev[start:end:end]
			}
			start = end
		}
	}
	r.FailureTags = cloneExact(rd.tags)
	r.Diagnostics = cloneExact(rd.diags)
	w.Result = r
	return w, nil
}

// cloneExact is a copy of ss at its length, nil when ss is empty.
func cloneExact(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, len(ss))
	copy(out, ss)
	return out
}

// check reads one check into rd's scratch, its evidence after the earlier
// checks'. The evidence of a check that names an earlier one
// (evidence_from) is a copy of that check's.
func (rd *resultReader) check(b []byte) error {
	var c sdk.Check
	var from uint64
	own := 0
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		var err error
		var s string
		switch {
		case num == 1 && typ == protowire.BytesType:
			c.KPI, err = rd.name(v)
		case num == 2 && typ == protowire.Fixed64Type:
			c.Score = math.Float64frombits(x)
		case num == 3 && typ == protowire.VarintType:
			c.Passed = x != 0
		case num == 4 && typ == protowire.BytesType:
			c.Detail, err = str(v)
		case num == 5 && typ == protowire.BytesType:
			s, err = rd.name(v)
			rd.ev = append(rd.ev, s)
			own++
		case num == 6 && typ == protowire.BytesType:
			c.FailureTag, err = rd.name(v)
		case num == 7 && typ == protowire.VarintType:
			from = x // the last one counts, as in proto.Unmarshal
		}
		return err
	})
	if err != nil {
		return err
	}
	i := len(rd.checks)
	if from > 0 {
		if from > uint64(i) {
			return fmt.Errorf("check %d: evidence_from %d names no earlier check", i, from)
		}
		if own > 0 {
			return fmt.Errorf("check %d: both evidence and evidence_from", i)
		}
		start := 0
		if from > 1 {
			start = rd.ends[from-2]
		}
		rd.ev = append(rd.ev, rd.ev[start:rd.ends[from-1]]...)
	}
	rd.checks = append(rd.checks, c)
	rd.ends = append(rd.ends, len(rd.ev))
	return nil
}

// CheckWireResults is CheckResults for results read by UnmarshalResults.
func CheckWireResults(cases []*sdk.Case, res []WireResult) error {
	if len(res) != len(cases) {
		return fmt.Errorf("%d results for %d cases", len(res), len(cases))
	}
	for i, r := range res {
		if r.CaseID != cases[i].ID {
			return fmt.Errorf("result %d is for case %q, want %q", i, r.CaseID, cases[i].ID)
		}
	}
	return nil
}
