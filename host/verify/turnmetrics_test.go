package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/store/storetest"
)

// TestTurnsKeepTheirMetrics (docs/evidence.md): every turn verify records
// keeps its metrics row itself, the bytes metrics_sha256 names, and the row
// is not also stored as a blob; a run rescored from that evidence keeps the
// rows the same way, so it can be rescored in turn.
func TestTurnsKeepTheirMetrics(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, b.DSN(t))
			req, rep := verifiedThenDeleted(t, st)
			kept := func(runID int64) {
				t.Helper()
				r, err := st.RunByID(ctx, runID)
				if err != nil {
					t.Fatal(err)
				}
				rows, err := st.TurnsDone(ctx, r.ID, r.Attempt)
				if err != nil {
					t.Fatal(err)
				}
				// TurnsDone reads no metrics row; TurnMetrics finds the
				// one each turn keeps (no blob of it exists, below).
				metrics, err := st.TurnMetrics(ctx, slices.Collect(maps.Values(rows)))
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, row := range rows {
					if row.MetricsSHA256 == "" {
						continue
					}
					n++
					m := metrics[row.MetricsSHA256]
					sum := sha256.Sum256(m)
					if hex.EncodeToString(sum[:]) != row.MetricsSHA256 {
						t.Errorf("run %d turn %s: metrics row %q, not the row metrics_sha256 %s names", runID, row.Label, m, row.MetricsSHA256)
					}
					if _, err := st.ReadBlob(ctx, row.MetricsSHA256); !errors.Is(err, store.ErrNotFound) {
						t.Errorf("run %d turn %s: ReadBlob(metrics) = %v, want ErrNotFound (kept in the turn only)", runID, row.Label, err)
					}
				}
				if n == 0 {
					t.Fatalf("run %d: no turn with a metrics row", runID)
				}
			}
			from := rep.Candidates[0].RunID
			kept(from)
			to := from
			for _, version := range []string{"v-rebuilt", "v-rebuilt-again"} {
				eng := req.Engine
				eng.ScorerVersion = version
				again, err := Rescore(ctx, RescoreRequest{Engine: eng, Candidate: "candidate-a", RunID: to})
				if err != nil {
					t.Fatalf("Rescore(%s) = %v", version, err)
				}
				if again.Diff.ToRun == to || len(again.NoEvidence) != 0 || again.Report.Candidates[0].Reused != 0 {
					t.Fatalf("Rescore(%s) = run %d, no evidence %v, reused %d; want every turn scored in a new run",
						version, again.Diff.ToRun, again.NoEvidence, again.Report.Candidates[0].Reused)
				}
				to = again.Diff.ToRun
				kept(to)
			}
		})
	}
}

// TestResumeHoldsNoMetricsRows: a resumed pass holds each recorded turn's
// latest row for the whole pass (to reuse or revise it) and never reads
// its metrics row, so it does not keep those bytes (docs/performance.md,
// "Flat memory").
func TestResumeHoldsNoMetricsRows(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, b.DSN(t))
			req, rep := verifiedThenDeleted(t, st)
			_, in, _, err := StoredInput(ctx, st, rep.Candidates[0].RunID)
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(req.Engine)
			if err != nil {
				t.Fatal(err)
			}
			v, err := e.begin(ctx, in, false)
			if err != nil {
				t.Fatal(err)
			}
			if v.run.ID != rep.Candidates[0].RunID || len(v.prior) == 0 {
				t.Fatalf("begin() resumed run %d with %d recorded turns; want run %d and some", v.run.ID, len(v.prior), rep.Candidates[0].RunID)
			}
			for k, row := range v.prior {
				if row.MetricsSHA256 == "" || row.Metrics != nil {
					t.Errorf("prior turn %v: metrics_sha256 %q, Metrics %d bytes; want the reference and no bytes", k, row.MetricsSHA256, len(row.Metrics))
				}
			}
		})
	}
}
