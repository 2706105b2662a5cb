package verify

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/pkg/diag"
)

// TurnRef is a turn whose evidence is stored and that a queue worker
// scores: what a queue job carries (docs/scale.md).
type TurnRef struct {
	Label   string `json:"label"`
	Epoch   int    `json:"epoch"`
	Trace   string `json:"trace"`
	Metrics string `json:"metrics"`
	Before  string `json:"before,omitempty"`
	After   string `json:"after,omitempty"`
}

// Enqueued is a candidate whose turns are recorded as evidence, ready for
// the queue.
type Enqueued struct {
	Candidate string
	Run       *store.Run
	Refs      []TurnRef // the turns left to score
	Recorded  int       // turns not queued: recorded already, or unreadable (verify records them unscored)
}

// RecordEvidence begins (or resumes) in's run and stores every turn's
// evidence without scoring it; the turns to score are returned as refs. A
// turn recorded before with the same input key, or whose input cannot be
// read, is not queued: Run's pass after the queue reuses or records it.
func (e *Engine) RecordEvidence(ctx context.Context, in *Input, fresh bool) (*Enqueued, diag.List, error) {
	if e.cfg.Store == nil {
		return nil, nil, fmt.Errorf("recording evidence of %s: no store", in.Candidate)
	}
	v, err := e.begin(ctx, in, fresh)
	if err != nil {
		return nil, nil, err
	}
	q := &Enqueued{Candidate: in.Candidate, Run: v.run}
	specs, err := in.specs()
	if err != nil {
		return nil, nil, err
	}
	var todo []*TurnSpec
	for i := range specs {
		if _, ok := e.tasks[specs[i].Label]; ok {
			todo = append(todo, &specs[i])
		}
	}
	var ds diag.List
	for start := 0; start < len(todo); start += e.cfg.ChunkSize {
		chunk := e.prepareChunk(ctx, v, todo[start:min(start+e.cfg.ChunkSize, len(todo))])
		var blobs []store.Blob
		for _, p := range chunk {
			ds = append(ds, p.diags...)
			if p.failed || p.reused != nil {
				q.Recorded++ // verify's pass after the queue records or reuses it
				continue
			}
			var row store.TurnRow
			if blobs, err = e.evidenceOf(v, p, &row, blobs, false); err != nil {
				return nil, nil, err
			}
			k := p.spec.key()
			q.Refs = append(q.Refs, TurnRef{Label: k.Label, Epoch: k.Epoch, Trace: row.TraceSHA256,
				Metrics: row.MetricsSHA256, Before: p.beforeSHA, After: p.afterSHA})
		}
		if err := e.cfg.Store.PutBlobs(ctx, blobs); err != nil {
			return nil, nil, fmt.Errorf("recording evidence of %s: %w", in.Candidate, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return q, ds, nil
}

// begin starts or resumes in's run and reads its recorded turns.
func (e *Engine) begin(ctx context.Context, in *Input, fresh bool) (*pass, error) {
	v := e.newPass(in.Candidate)
	out := v.out
	units, err := json.Marshal(e.units(in))
	if err != nil {
		return nil, fmt.Errorf("starting run for %s: %w", in.Candidate, err)
	}
	v.run, err = e.cfg.Store.BeginRun(ctx, store.RunKey{Candidate: in.Candidate, PackSHA256: e.cfg.Pack.SHA256,
		PackName: e.cfg.Pack.Name(), ScorerVersion: e.cfg.ScorerVersion, HostVersion: e.cfg.HostVersion, Units: units}, fresh)
	if err != nil {
		return nil, fmt.Errorf("starting run for %s: %w", in.Candidate, err)
	}
	out.RunID, out.Attempt = v.run.ID, v.run.Attempt
	// The pass holds these rows to its end and never reads a metrics row
	// (a reused turn is recorded already): TurnsDone reads none, only the
	// reference (docs/performance.md, "Flat memory").
	if v.prior, err = e.cfg.Store.TurnsDone(ctx, v.run.ID, v.run.Attempt); err != nil {
		return nil, fmt.Errorf("reading recorded turns of %s: %w", in.Candidate, err)
	}
	return v, nil
}

// ScoreRefs scores turns of a recorded run from their stored evidence and
// returns their rows, unrecorded: a queue worker records them in the
// transaction that completes its job. Only the store's reads are used.
func (e *Engine) ScoreRefs(ctx context.Context, run store.RunRow, refs []TurnRef) ([]store.TurnRow, error) {
	st := e.cfg.Store
	shas := make([]string, len(refs))
	for i, r := range refs {
		shas[i] = r.Metrics
	}
	metrics, err := st.ReadBlobs(ctx, shas)
	if err != nil {
		return nil, fmt.Errorf("reading evidence of run %d: %w", run.ID, err)
	}
	prior, err := st.TurnsDone(ctx, run.ID, run.Attempt)
	if err != nil {
		return nil, fmt.Errorf("reading recorded turns of run %d: %w", run.ID, err)
	}
	v := e.newPass(run.Candidate)
	v.run, v.prior = &store.Run{ID: run.ID, Attempt: run.Attempt}, prior
	specs := make([]*TurnSpec, len(refs))
	for i, r := range refs {
		for _, sha := range []string{r.Trace, r.Metrics, r.Before, r.After} {
			v.stored.insert(sha)
		}
		row := store.TurnRow{Label: r.Label, Epoch: r.Epoch, TraceSHA256: r.Trace, MetricsSHA256: r.Metrics,
			StateBeforeSHA256: r.Before, StateAfterSHA256: r.After}
		ts, err := evidenceTurnFrom(run, row, metrics[r.Metrics])
		if err != nil {
			return nil, err
		}
		specs[i] = &ts
	}
	chunk := e.prepareChunk(ctx, v, specs)
	e.scoreChunk(ctx, chunk)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rows := make([]store.TurnRow, 0, len(chunk))
	for _, p := range chunk {
		if p.reused != nil {
			continue // recorded already, by an earlier job or verify
		}
		r := e.finish(ctx, run.Candidate, p)
		row, _, err := e.scoredRow(v, p, &r, nil)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// StoredInput is a recorded run's latest attempt read back from its stored
// evidence, to verify it again without its files (`assay runs wait` after
// `verify --queue --detach`). Turns recorded without evidence are listed.
func StoredInput(ctx context.Context, st *store.Store, runID int64) (store.RunRow, *Input, []string, error) {
	r, err := st.RunByID(ctx, runID)
	if err != nil {
		return r, nil, nil, fmt.Errorf("run %d: %w", runID, err)
	}
	in, none, err := evidenceInput(ctx, st, r)
	return r, in, none, err
}
