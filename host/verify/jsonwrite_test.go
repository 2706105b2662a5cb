package verify

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/store"
)

func randomTurnResult(r *rand.Rand) TurnResult {
	g := keyValues{r: r, refuse: 20}
	str, num, ptr, strs := g.str, g.num, g.ptr, g.strs
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

// TestMetricsRowIsMarshal: a turn's metrics row is json.Marshal's bytes
// for any metrics (times at the edges of the years and zone offsets
// time.Time's MarshalJSON accepts, with and without a monotonic reading
// and nanoseconds), and nil where json.Marshal refuses them; the
// hand-written path takes the common cases and gives the same bytes.
func TestMetricsRowIsMarshal(t *testing.T) {
	t.Parallel()
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("ist", 5*3600+1800), time.FixedZone("w", -(23*3600 + 59*60)),
		time.FixedZone("s", 37), time.FixedZone("day", 24*3600), time.FixedZone("-day", -24*3600), time.FixedZone("big", 26*3600)}
	times := []time.Time{{}, time.Now(), time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 120000000, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Unix(0, 0), time.Unix(1<<40, 7)}
	r := rand.New(rand.NewPCG(3, 9))
	var fast, written, refused int
	for i := range 5000 {
		str := func() string { return keyStrings[r.IntN(len(keyStrings))] }
		tm := func() time.Time {
			if r.IntN(8) == 0 { // any, those MarshalJSON refuses included
				return times[r.IntN(len(times))].In(zones[r.IntN(len(zones))])
			}
			return times[r.IntN(4)].In(zones[r.IntN(5)])
		}
		ptr := func() *float64 {
			if r.IntN(3) == 0 {
				return nil
			}
			f := keyFloats[r.IntN(len(keyFloats)-3)] // finite
			if r.IntN(20) == 0 {
				f = keyFloats[r.IntN(len(keyFloats))]
			}
			return &f
		}
		ts := TurnSpec{Candidate: str(), Label: str(), Persona: str(), LatencyS: ptr(), CostUSD: ptr(), StartedAt: tm(), FinishedAt: tm()}
		m := turnMetrics{Candidate: ts.Candidate, Label: ts.Label, Persona: ts.Persona, LatencyS: ts.LatencyS, CostUSD: ts.CostUSD,
			StartedAt: ts.StartedAt, FinishedAt: ts.FinishedAt}
		want, err := json.Marshal(m)
		got := metricsRow(&ts)
		if err != nil {
			refused++
			if got != nil {
				t.Fatalf("%d: metricsRow(%+v) = %s; json.Marshal refuses it: %v", i, ts, got, err)
			}
			continue
		}
		written++
		if string(got) != string(want) {
			t.Fatalf("%d: metricsRow(%+v) =\n%s\nwant json.Marshal's\n%s", i, ts, got, want)
		}
		if b, ok := appendMetricsRow(nil, &m); ok {
			fast++
			if string(b) != string(want) {
				t.Fatalf("%d: appendMetricsRow(%+v) =\n%s\nwant\n%s", i, m, b, want)
			}
		}
	}
	if refused < 100 || fast < 1000 {
		t.Errorf("%d refused, %d written, %d of them by hand: the test no longer covers every path", refused, written, fast)
	}
}
