package verify

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/store/storetest"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/sdk/batchrun"
)

// flaky is the local scorers with one scorer nondeterministic: every call
// fails the first check of every other result.
type flaky struct {
	*local
	id    scorer.ID
	calls *atomic.Int64
}

func (f flaky) Score(ctx context.Context, id scorer.ID, cases []*scorer.Case) []batchrun.Outcome {
	out := f.local.Score(ctx, id, cases)
	if id != f.id || f.calls.Add(1)%2 == 0 {
		return out
	}
	for i := range out {
		if r := out[i].Result; r != nil && len(r.Checks) > 0 {
			r.Checks[0].Passed, r.Checks[0].Score = false, 0
		}
	}
	return out
}

// TestProbeFlagsNondeterministicScorer (issue 17 item 5): the probe flags a
// nondeterministic scorer and a scorer whose result changed under the same
// version, records its results, and verify then carries them as
// scorer_health.
func TestProbeFlagsNondeterministicScorer(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, b.DSN(t))
			req, _ := verifiedThenDeleted(t, st)
			l := req.Engine.Scorers.(*local)
			eng := req.Engine
			eng.Scorers = flaky{local: l, id: "memory_grounding", calls: &atomic.Int64{}}
			health, err := Probe(ctx, ProbeRequest{Engine: eng, Sample: 10, Repeat: 3, Seed: 7})
			if err != nil {
				t.Fatalf("Probe() = %v", err)
			}
			got := map[string]string{}
			for _, h := range health {
				got[h.ID] = h.Status
			}
			want := map[string]string{"memory_grounding": store.ProbeNondeterministic, "task_state": store.ProbeOK,
				"composite": store.ProbeOK, "answer_keywords": store.ProbeOK, "tool_sequence": store.ProbeOK}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Probe() statuses (-want +got):\n%s", diff)
			}

			rep, err := Run(ctx, Request{Engine: req.Engine, Inputs: nil})
			if err != nil {
				t.Fatal(err)
			}
			flagged := map[string]bool{}
			for _, h := range rep.ScorerHealth {
				flagged[h.ID] = h.Flagged()
			}
			if !flagged["memory_grounding"] || flagged["task_state"] {
				t.Errorf("verify scorer_health = %+v, want memory_grounding flagged, task_state not", rep.ScorerHealth)
			}

			eng.Scorers = tweaked{local: l, id: "task_state"}
			health, err = Probe(ctx, ProbeRequest{Engine: eng, Sample: 10, Repeat: 2, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range health {
				if h.ID == "task_state" && h.Status != store.ProbeChangedSameVersion {
					t.Errorf("Probe(task_state changed, same version) = %+v, want %s", h, store.ProbeChangedSameVersion)
				}
			}
		})
	}
}

// TestProbeSaysWhatItSkipped: a sampled turn whose stored evidence no
// longer reads back is skipped, and the probe says so with the reason
// instead of quietly probing a smaller sample.
func TestProbeSaysWhatItSkipped(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, storetest.SQLite(t))
	req, _ := verifiedThenDeleted(t, st)
	if _, err := st.DB().ExecContext(ctx, `UPDATE company_eval_blobs SET data = x'00' WHERE kind = 'trace'`); err != nil {
		t.Fatal(err)
	}
	var skipped []ProbeSkip
	if _, err := Probe(ctx, ProbeRequest{Engine: req.Engine, Sample: 10, Repeat: 2, Seed: 7,
		Skipped: func(k ProbeSkip) { skipped = append(skipped, k) }}); err != nil {
		t.Fatalf("Probe() = %v", err)
	}
	if len(skipped) == 0 || skipped[0].Reason == "" || skipped[0].Label == "" {
		t.Errorf("Probe() over corrupt evidence skipped %+v, want every sampled turn named with its reason", skipped)
	}
}
