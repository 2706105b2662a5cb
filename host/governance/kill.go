package governance

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/assay-eval/assay/host/kpi"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
)

// Errors of clearing a kill criterion: mistakes of the person clearing it.
var (
	ErrNotFired   = errors.New("no fired kill criterion has this name")
	ErrBlankClear = errors.New("who clears it is blank (--by)")
)

// CriterionState is one kill criterion's state (item 5's governance check).
type CriterionState struct {
	Name    string     `json:"name"`
	Fired   bool       `json:"fired"`
	FiredAt *time.Time `json:"fired_at"`
	RunID   int64      `json:"run_id"`
	Message string     `json:"message"`
	// Candidate is the candidate whose history fired it; New says this
	// evaluation recorded the firing.
	Candidate string `json:"candidate,omitempty"`
	New       bool   `json:"new,omitempty"`
	// Error says why the criterion could not be evaluated over some
	// candidate's history (a run-time CEL error): it is not fired, and not
	// known to be clear either.
	Error string `json:"error,omitempty"`
}

// Fired returns the pack's firings not yet cleared, oldest first.
func Fired(ctx context.Context, st *store.Store, packSHA256 string) ([]Firing, error) {
	rows, err := st.DB().QueryContext(ctx, st.Rebind(`SELECT id, name, candidate, run_id, message, fired_at
		FROM company_eval_kill_firings WHERE pack_sha256 = ? AND cleared_at IS NULL ORDER BY id`), packSHA256)
	if err != nil {
		return nil, fmt.Errorf("read kill criteria firings: %w", err)
	}
	defer rows.Close()
	var out []Firing
	for rows.Next() {
		var f Firing
		if err := rows.Scan(&f.ID, &f.Name, &f.Candidate, &f.RunID, &f.Message, &f.FiredAt); err != nil {
			return nil, fmt.Errorf("read kill criteria firings: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// CheckKill evaluates every kill criterion of p over the history of each
// candidate (only those named, when candidates is not empty) and records a
// criterion the first time it fires; a fired criterion stays fired, and is
// not evaluated again, until a person clears it. Nothing else is changed.
func CheckKill(ctx context.Context, st *store.Store, p *pack.Pack, candidates []string) ([]CriterionState, error) {
	progs, ds := kpi.CompileKillCriteria(p)
	if ds.HasErrors() {
		return nil, fmt.Errorf("kill criteria: %w", ds.Errors())
	}
	if len(progs) == 0 {
		// Nothing to evaluate: the history, which grows with every run
		// ever recorded against the pack, is not read (docs/performance.md).
		return []CriterionState{}, nil
	}
	all, err := History(ctx, st, p.SHA256, "")
	if err != nil {
		return nil, err
	}
	byCand := map[string][]Entry{}
	for _, e := range all {
		byCand[e.Candidate] = append(byCand[e.Candidate], e)
	}
	runs := make(map[string][]kpi.HistoryRun, len(byCand)) // converted once, evaluated by every criterion
	for c, h := range byCand {
		runs[c] = HistoryRuns(h)
	}
	if len(candidates) == 0 {
		for c := range byCand {
			candidates = append(candidates, c)
		}
	}
	sort.Strings(candidates)
	var units verify.Units
	if len(all) > 0 {
		units = all[len(all)-1].Units
	}
	_, reviews, err := Scorers(ctx, st, p.SHA256, PackThresholds(p), units)
	if err != nil {
		return nil, err
	}
	fired, err := Fired(ctx, st, p.SHA256)
	if err != nil {
		return nil, err
	}
	active := map[string]Firing{}
	for _, f := range fired {
		active[f.Name] = f
	}
	out := []CriterionState{}
	for _, prog := range progs {
		kc := prog.Criterion
		if f, ok := active[kc.Name]; ok {
			out = append(out, CriterionState{Name: kc.Name, Fired: true, FiredAt: &f.FiredAt, RunID: f.RunID, Message: f.Message, Candidate: f.Candidate})
			continue
		}
		s, err := evalCriterion(ctx, st, p.SHA256, prog, candidates, runs, reviews)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func evalCriterion(ctx context.Context, st *store.Store, packSHA string, prog *kpi.KillProgram, candidates []string,
	runs map[string][]kpi.HistoryRun, reviews map[string]kpi.ScorerReview) (CriterionState, error) {
	kc := prog.Criterion
	s := CriterionState{Name: kc.Name, Message: kc.Message}
	for _, c := range candidates {
		h := runs[c]
		if len(h) == 0 {
			continue
		}
		hit, err := prog.Eval(h, reviews)
		if err != nil {
			s.Error = joinWhy(s.Error, "candidate "+c+": "+err.Error())
			continue
		}
		if !hit {
			continue
		}
		now := time.Now().UTC()
		run := h[len(h)-1].RunID
		msg := kc.Message
		if strings.TrimSpace(msg) == "" {
			msg = "kill criterion " + kc.Name + " fired: " + kc.Expr
		}
		_, err = st.DB().ExecContext(ctx, st.Rebind(`INSERT INTO company_eval_kill_firings
			(pack_sha256, name, candidate, run_id, message, fired_at) VALUES (?, ?, ?, ?, ?, ?)`), packSHA, kc.Name, c, run, msg, now)
		if err != nil {
			return s, fmt.Errorf("record kill criterion %s: %w", kc.Name, err)
		}
		return CriterionState{Name: kc.Name, Fired: true, FiredAt: &now, RunID: run, Message: msg, Candidate: c, New: true}, nil
	}
	return s, nil
}

// Clear records that a person cleared a fired criterion, with why.
func Clear(ctx context.Context, st *store.Store, packSHA256, name, by, reason string) error {
	var errs []error
	if strings.TrimSpace(by) == "" {
		errs = append(errs, ErrBlankClear)
	}
	if strings.TrimSpace(reason) == "" {
		errs = append(errs, ErrBlankReason)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	res, err := st.DB().ExecContext(ctx, st.Rebind(`UPDATE company_eval_kill_firings SET cleared_at = ?, cleared_by = ?, clear_reason = ?
		WHERE pack_sha256 = ? AND name = ? AND cleared_at IS NULL`), time.Now().UTC(), by, reason, packSHA256, name)
	if err != nil {
		return fmt.Errorf("clear kill criterion %s: %w", name, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("clear kill criterion %q: %w", name, ErrNotFired)
	}
	return nil
}
