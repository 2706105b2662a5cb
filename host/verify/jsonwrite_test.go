package verify

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/store"
)

func randomTurnResult(r *rand.Rand) TurnResult {
	str := func() string {
		if r.IntN(4) == 0 {
			return keyStrings[r.IntN(len(keyStrings))] + keyStrings[r.IntN(len(keyStrings))]
		}
		return keyStrings[r.IntN(len(keyStrings))]
	}
	num := func() float64 {
		if r.IntN(20) == 0 {
			return keyFloats[r.IntN(len(keyFloats))]
		}
		return keyFloats[r.IntN(len(keyFloats)-3)] // finite
	}
	ptr := func() *float64 {
		if r.IntN(3) == 0 {
			return nil
		}
		f := num()
		return &f
	}
	strs := func() []string {
		switch r.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		s := make([]string, 1+r.IntN(3))
		for i := range s {
			s[i] = str()
		}
		return s
	}
	res := TurnResult{Candidate: str(), Label: str(), Epoch: r.IntN(5) - 1, Persona: str(),
		Status: score.Status(str()), ProcessScore: ptr(), KPIScore: ptr(), TurnScore: ptr(),
		Finalized: r.IntN(2) == 0, Error: r.IntN(2) == 0, LatencyS: ptr(), ToolCalls: r.IntN(5) - 1, CostUSD: ptr(),
		FailureTags: strs(), Scorer: ScorerRef{ID: str(), Version: str(), SHA256: str()},
		Diagnostics: strs(), weight: num(), sliceTags: strs()}
	if r.IntN(3) > 0 {
		res.StateBefore, res.StateAfter = str(), str()
	}
	switch r.IntN(4) {
	case 0:
	case 1:
		res.Checks = []CheckResult{}
	default:
		for range 1 + r.IntN(3) {
			res.Checks = append(res.Checks, CheckResult{Name: str(), Source: str(), Score: num(), Passed: r.IntN(2) == 0,
				Detail: str(), FailureTag: str(), Evidence: strs()})
		}
	}
	return res
}

// TestAppendTurnResultIsMarshal: a turn's recorded result, checks and
// failure tags (turnRow) are json.Marshal's bytes of the result, its
// checks and its tags for any result, the two spans cannot be grown into
// the result, and a result json.Marshal refuses is refused by turnRow as
// before.
func TestAppendTurnResultIsMarshal(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(16, 7))
	run := &store.Run{ID: 3, Attempt: 2}
	var failed, written int
	for i := range 5000 {
		res := randomTurnResult(r)
		want, err := json.Marshal(&res)
		row, rowErr := turnRow(run, &res)
		if (err == nil) != (rowErr == nil) {
			t.Fatalf("%d: turnRow(%+v) error %v; json.Marshal's %v", i, res, rowErr, err)
		}
		if err != nil {
			failed++
			continue
		}
		written++
		wantChecks, _ := json.Marshal(res.Checks)
		wantTags, _ := json.Marshal(res.FailureTags)
		if string(row.Result) != string(want) || string(row.Checks) != string(wantChecks) || string(row.FailureTags) != string(wantTags) {
			t.Fatalf("%d: turnRow(%+v) =\n%s\n%s\n%s\nwant json.Marshal's\n%s\n%s\n%s", i, res,
				row.Result, row.Checks, row.FailureTags, want, wantChecks, wantTags)
		}
		if row.Label != res.Label || row.Epoch != res.Epoch || row.RunID != 3 || row.Attempt != 2 || row.Status != string(res.Status) ||
			row.ScorerID != res.Scorer.ID || row.ScorerSHA256 != res.Scorer.SHA256 ||
			row.StateBeforeSHA256 != res.StateBefore || row.StateAfterSHA256 != res.StateAfter ||
			row.ProcessScore != res.ProcessScore || row.KPIScore != res.KPIScore || row.TurnScore != res.TurnScore {
			t.Fatalf("%d: turnRow(%+v) = %+v: a column is not the result's", i, res, row)
		}
		_ = append(row.Checks, 'x')
		_ = append(row.FailureTags, 'x')
		if string(row.Result) != string(want) {
			t.Fatalf("%d: appending to the checks or tags changed the result: %s", i, row.Result)
		}
	}
	if failed < 100 || written < 1000 {
		t.Errorf("%d results refused and %d written: the test no longer covers both", failed, written)
	}
}

// FuzzAppendTurnResult: appendTurnResult and json.Marshal agree on any
// strings and numbers.
func FuzzAppendTurnResult(f *testing.F) {
	f.Add("c0001", "t1", "cto", "found every keyword", "<&>\u2028", 0.75, 1.0, 2.5)
	f.Add("\xff", "", "\x00", "\\", "\"", math.NaN(), 1e-7, 1e21)
	f.Fuzz(func(t *testing.T, candidate, label, persona, detail, tag string, process, kpi, latency float64) {
		res := TurnResult{Candidate: candidate, Label: label, Epoch: 1, Persona: persona, Status: score.StatusScored,
			ProcessScore: &process, KPIScore: &kpi, LatencyS: &latency,
			Checks:      []CheckResult{{Name: tag, Source: "cel", Score: kpi, Detail: detail, FailureTag: tag, Evidence: []string{detail}}},
			FailureTags: []string{tag}, Scorer: ScorerRef{ID: label, Version: persona, SHA256: detail},
			Diagnostics: []string{detail}, StateBefore: tag}
		want, err := json.Marshal(&res)
		got, checks, tags, ok := appendTurnResult(nil, &res)
		if (err == nil) != ok {
			t.Fatalf("appendTurnResult(%+v) ok %v; json.Marshal's error %v", res, ok, err)
		}
		wantChecks, _ := json.Marshal(res.Checks)
		wantTags, _ := json.Marshal(res.FailureTags)
		if ok && (string(got) != string(want) || string(checks) != string(wantChecks) || string(tags) != string(wantTags)) {
			t.Fatalf("appendTurnResult(%+v) = %s, %s, %s; json.Marshal = %s, %s, %s", res, got, checks, tags, want, wantChecks, wantTags)
		}
	})
}
