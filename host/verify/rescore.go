package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/pkg/diag"
)

// RescoreRequest re-scores the evidence stored with one recorded run with
// the scorers of Engine (docs/evidence.md).
type RescoreRequest struct {
	Engine Config
	// Candidate is whose run; RunID, when not zero, the run itself, else
	// the candidate's latest run of the pack.
	Candidate string
	RunID     int64
	// OutDir, when set, receives results.json, summary.json and diff.json.
	OutDir      string
	Start       func(ctx context.Context) error
	Diagnostics func(diag.List)
}

// Diff is diff.json: what rescoring changed.
type Diff struct {
	FromRun           int64       `json:"from_run"`
	ToRun             int64       `json:"to_run"`
	FromScorerVersion string      `json:"from_scorer_version"`
	ToScorerVersion   string      `json:"to_scorer_version"`
	Turns             []TurnDiff  `json:"turns"` // the turns that changed
	Summary           DiffSummary `json:"summary"`
}

// DiffSummary is the candidate-level change.
type DiffSummary struct {
	TurnsChanged int      `json:"turns_changed"`
	GatesChanged []string `json:"gates_changed"` // gates failed on one side only
	VerdictFrom  string   `json:"verdict_from"`
	VerdictTo    string   `json:"verdict_to"`
}

// Rescored is the outcome of Rescore.
type Rescored struct {
	Diff Diff `json:"diff"`
	// MeanFrom and MeanTo are the candidate's mean score before and after.
	MeanFrom float64 `json:"mean_score_from"`
	MeanTo   float64 `json:"mean_score_to"`
	// Unchanged: the scorers are the ones that scored the run, so every
	// turn was reused and nothing was scored again.
	Unchanged bool `json:"unchanged"`
	// NoEvidence lists the turns recorded without evidence (before it was
	// kept, or whose input could not be read): they are missing from the
	// new run.
	NoEvidence []string `json:"no_evidence"`
	Drift      []Drift  `json:"drift"`
	Report     *Report  `json:"report"`
}

// Rescore re-scores a recorded run from its stored evidence, through the
// same engine as Run, and records the result as a run of the current
// scorer version; with unchanged scorers that is the same run, and nothing
// is scored again.
func Rescore(ctx context.Context, req RescoreRequest) (*Rescored, error) {
	st := req.Engine.Store
	if st == nil || req.Engine.Pack == nil {
		return nil, errors.New("rescore: a pack and a database are required")
	}
	from, err := sourceRun(ctx, st, req.Engine.Pack.SHA256, req.Candidate, req.RunID)
	if err != nil {
		return nil, err
	}
	rows, err := st.TurnsDone(ctx, from.ID, from.Attempt)
	if err != nil {
		return nil, err
	}
	old, err := rowResults(rows)
	if err != nil {
		return nil, err
	}
	in, noEvidence, err := evidenceInputOf(ctx, st, from, rows)
	if err != nil {
		return nil, err
	}
	if len(noEvidence) > 0 && from.ScorerVersion == req.Engine.ScorerVersion {
		// Resuming the same run without them would record them as missing.
		return nil, &InputError{Err: fmt.Errorf("run %d was scored by the installed scorers and %d of its turns have no stored evidence (%s): nothing to rescore",
			from.ID, len(noEvidence), strings.Join(noEvidence, ", "))}
	}
	rep, err := Run(ctx, Request{Engine: req.Engine, Inputs: []*Input{in}, OutDir: req.OutDir,
		Start: req.Start, Diagnostics: req.Diagnostics})
	if err != nil {
		return nil, err
	}
	if len(rep.Candidates) != 1 {
		return nil, fmt.Errorf("rescore: run %d was not verified", from.ID)
	}
	c := rep.Candidates[0]
	to, err := st.RunByID(ctx, c.RunID)
	if err != nil {
		return nil, err
	}
	now, err := runResults(ctx, st, to)
	if err != nil {
		return nil, err
	}
	out := &Rescored{Report: rep, NoEvidence: noEvidence, Drift: nonNil(DriftBetween(RunUnits(from), RunUnits(to))),
		Unchanged: to.ID == from.ID && c.Reused == len(in.Turns) && c.Rescored == 0 && c.Retried == 0}
	sumFrom, vFrom := storedSummary(from.Summary, from.Verdict)
	out.MeanFrom, out.MeanTo = sumFrom.MeanScore, c.MeanScore
	out.Diff = rescoreDiff(from, to, old, now, sumFrom, vFrom, &c)
	if req.OutDir != "" {
		if err := writeJSON(filepath.Join(req.OutDir, "diff.json"), out.Diff); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func rescoreDiff(from, to store.RunRow, old, now []TurnResult, sumFrom score.Summary, vFrom RunVerdict, c *CandidateReport) Diff {
	d := Diff{FromRun: from.ID, ToRun: to.ID, FromScorerVersion: from.ScorerVersion, ToScorerVersion: to.ScorerVersion,
		Turns: []TurnDiff{}}
	for _, td := range diffTurns(old, now) {
		if td.changed() {
			d.Turns = append(d.Turns, td)
		}
	}
	d.Summary = DiffSummary{TurnsChanged: len(d.Turns), GatesChanged: gatesChanged(sumFrom.Gates, c.Gates),
		VerdictFrom: string(vFrom.Verdict), VerdictTo: string(c.Verdict.Verdict)}
	return d
}

// sourceRun is the run to rescore: runID, else the candidate's most
// recently updated run of the pack.
func sourceRun(ctx context.Context, st *store.Store, packSHA, candidate string, runID int64) (store.RunRow, error) {
	if runID != 0 {
		r, err := st.RunByID(ctx, runID)
		if err != nil {
			return r, &InputError{Err: err}
		}
		if r.PackSHA256 != packSHA {
			return r, &InputError{Err: fmt.Errorf("run %d was verified against another pack (sha256 %s)", runID, shortSHA(r.PackSHA256))}
		}
		if candidate != "" && r.Candidate != candidate {
			return r, &InputError{Err: fmt.Errorf("run %d is candidate %q, not %q", runID, r.Candidate, candidate)}
		}
		return r, nil
	}
	runs, err := st.Runs(ctx, packSHA)
	if err != nil {
		return store.RunRow{}, err
	}
	var latest store.RunRow
	for _, r := range runs {
		if r.Candidate == candidate && (latest.ID == 0 || r.UpdatedAt.After(latest.UpdatedAt)) {
			latest = r
		}
	}
	if latest.ID == 0 {
		return latest, &InputError{Err: fmt.Errorf("%w of candidate %q for this pack", ErrNotRecorded, candidate)}
	}
	return latest, nil
}

// evidenceInput is a recorded run's turns as an Input read from the stored
// evidence, and the labels of the turns that have none.
func evidenceInput(ctx context.Context, st *store.Store, r store.RunRow) (*Input, []string, error) {
	rows, err := st.TurnsDone(ctx, r.ID, r.Attempt)
	if err != nil {
		return nil, nil, err
	}
	return evidenceInputOf(ctx, st, r, rows)
}

// evidenceInputOf is evidenceInput of the run's turn rows read.
func evidenceInputOf(ctx context.Context, st *store.Store, r store.RunRow, rows map[store.TurnKey]store.TurnRow) (*Input, []string, error) {
	u := RunUnits(r)
	in := &Input{Candidate: r.Candidate, PolicyVersion: u.PolicyVersion, SkillVersion: u.SkillVersion}
	noEvidence := []string{}
	var withEvidence []store.TurnRow
	for _, row := range rows {
		if row.Status != store.TurnMissing && row.TraceSHA256 != "" && row.MetricsSHA256 != "" {
			withEvidence = append(withEvidence, row)
		}
	}
	metrics, err := st.TurnMetrics(ctx, withEvidence)
	if err != nil {
		return nil, nil, err
	}
	for _, row := range rows {
		if row.Status == store.TurnMissing {
			continue
		}
		if row.TraceSHA256 == "" || row.MetricsSHA256 == "" {
			noEvidence = append(noEvidence, row.Label)
			continue
		}
		ts, err := evidenceTurnFrom(r, row, metrics[row.MetricsSHA256])
		if err != nil {
			return nil, nil, err
		}
		in.Turns = append(in.Turns, ts)
	}
	return in, noEvidence, nil
}

// evidenceTurnFrom is one recorded turn read back from its evidence, raw
// being its metrics row (nil when it is not stored).
func evidenceTurnFrom(r store.RunRow, row store.TurnRow, raw []byte) (TurnSpec, error) {
	if raw == nil {
		return TurnSpec{}, fmt.Errorf("rescore: turn %s of run %d: metrics row %s: %w", row.Label, r.ID, shortSHA(row.MetricsSHA256), store.ErrNotFound)
	}
	var m turnMetrics
	if err := json.Unmarshal(raw, &m); err != nil {
		return TurnSpec{}, fmt.Errorf("rescore: turn %s of run %d: metrics row: %w", row.Label, r.ID, err)
	}
	pos := diag.Pos{File: fmt.Sprintf("run %d turn %s (stored evidence)", r.ID, row.Label)}
	if row.Epoch > 1 {
		pos.File = fmt.Sprintf("run %d turn %s epoch %d (stored evidence)", r.ID, row.Label, row.Epoch)
	}
	return TurnSpec{Candidate: m.Candidate, Label: m.Label, Epoch: max(row.Epoch, 1), Persona: m.Persona, LatencyS: m.LatencyS, CostUSD: m.CostUSD,
		StartedAt: m.StartedAt, FinishedAt: m.FinishedAt, Pos: pos, traceSHA: row.TraceSHA256, traceTurn: row.TraceKeptBy(),
		StateBefore: Part{stored: row.StateBeforeSHA256, Pos: pos}, StateAfter: Part{stored: row.StateAfterSHA256, Pos: pos}}, nil
}
