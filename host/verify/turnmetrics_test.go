package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"os"
	"path/filepath"
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
				rows := turnsOfRun(t, st, runID)
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
			rescoredInTurn(t, req, rep.Candidates[0].RunID, kept)
		})
	}
}

// turnsOfRun is the latest revision of each turn recorded by run runID's
// attempt (TurnsDone: without their metrics rows and traces).
func turnsOfRun(t *testing.T, st *store.Store, runID int64) map[store.TurnKey]store.TurnRow {
	t.Helper()
	ctx := context.Background()
	r, err := st.RunByID(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.TurnsDone(ctx, r.ID, r.Attempt)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// rescoredInTurn calls check on run from, then rescores it twice, each
// rescore from the run before it under a new scorer version, and calls
// check on each new run: every turn is scored again from the evidence the
// run before recorded.
func rescoredInTurn(t *testing.T, req Request, from int64, check func(runID int64)) {
	t.Helper()
	check(from)
	to := from
	for _, version := range []string{"v-rebuilt", "v-rebuilt-again"} {
		eng := req.Engine
		eng.ScorerVersion = version
		again, err := Rescore(context.Background(), RescoreRequest{Engine: eng, Candidate: "candidate-a", RunID: to})
		if err != nil {
			t.Fatalf("Rescore(%s) = %v", version, err)
		}
		if again.Diff.ToRun == to || len(again.NoEvidence) != 0 || again.Report.Candidates[0].Reused != 0 {
			t.Fatalf("Rescore(%s) = run %d, no evidence %v, reused %d; want every turn scored in a new run",
				version, again.Diff.ToRun, again.NoEvidence, again.Report.Candidates[0].Reused)
		}
		to = again.Diff.ToRun
		check(to)
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

// TestSmallTracesKeptInTheirTurn (docs/evidence.md): a trace of at most
// 512 bytes is kept in its turn's row and not stored as a blob; a longer
// one is a blob and its turn keeps none. Every turn's trace reads back
// (store.ReadTrace) as the bytes trace_sha256 names, and a run rescored
// from that evidence keeps its small traces the same way, so it can be
// rescored in turn. It fails if a small trace is also stored as a blob,
// if a rescored revision keeps neither, or if a reader looks only in the
// blob table.
func TestSmallTracesKeptInTheirTurn(t *testing.T) {
	small := "{\"type\":\"phase\",\"phase\":\"skill_dispatch\"}\n" +
		"{\"type\":\"final_answer\",\"payload\":{\"message\":\"Validated: 13 passed, 1 failed.\"}}\n" +
		"{\"type\":\"done\",\"reply\":\"ok\",\"finalized\":true}\n"
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, b.DSN(t))
			dir := copyRun(t, "../../examples/runs/candidate-a", "candidate-a")
			if err := os.WriteFile(filepath.Join(dir, "results", "validate_delivery_tools.ndjson"), []byte(small), 0o644); err != nil {
				t.Fatal(err)
			}
			req := exampleRequest(t, newLocal(), dir)
			req.Engine.Store = st
			rep, err := Run(ctx, req)
			if err != nil {
				t.Fatalf("Run() = %v", err)
			}
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			check := func(runID int64) {
				t.Helper()
				rows := turnsOfRun(t, st, runID)
				kept := 0
				for _, row := range rows {
					if row.TraceSHA256 == "" {
						continue
					}
					var n int
					if err := st.DB().QueryRowContext(ctx, st.Rebind(`SELECT length(trace) FROM company_eval_turns WHERE id = ?`), row.ID).Scan(&n); err != nil {
						t.Fatal(err)
					}
					_, blobErr := st.ReadBlob(ctx, row.TraceSHA256)
					tr, err := st.ReadTrace(ctx, row.TraceKeptBy(), row.TraceSHA256)
					if err != nil {
						t.Fatalf("run %d turn %s: ReadTrace = %v", runID, row.Label, err)
					}
					if sum := sha256.Sum256(tr); hex.EncodeToString(sum[:]) != row.TraceSHA256 {
						t.Errorf("run %d turn %s: the trace read back is not the one trace_sha256 names", runID, row.Label)
					}
					switch {
					case row.Label == "validate_delivery_tools":
						kept++
						if n != len(small) || !errors.Is(blobErr, store.ErrNotFound) {
							t.Errorf("run %d turn %s (a %d-byte trace): kept %d bytes, ReadBlob = %v; want it kept and no blob", runID, row.Label, len(small), n, blobErr)
						}
					case n != 0 || blobErr != nil:
						t.Errorf("run %d turn %s (a long trace): kept %d bytes, ReadBlob = %v; want a blob and nothing kept", runID, row.Label, n, blobErr)
					}
				}
				if kept != 1 {
					t.Errorf("run %d: %d turns with the small trace, want 1", runID, kept)
				}
			}
			rescoredInTurn(t, req, rep.Candidates[0].RunID, check)
		})
	}
}
