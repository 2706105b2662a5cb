package governance

import (
	"context"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
)

// AfterVerify is the verify.Request.Govern hook of a verification of p: it
// records each candidate's run history, marks the scorers review made
// suspect in rep.ScorerHealth, evaluates the kill criteria over the verified
// candidates' history (recording new firings) and lists every fired one in
// rep.KillCriteria. It changes nothing else.
func AfterVerify(st *store.Store, p *pack.Pack) func(ctx context.Context, rep *verify.Report) error {
	return func(ctx context.Context, rep *verify.Report) error {
		if st == nil {
			return nil
		}
		if err := RecordHistory(ctx, st, rep); err != nil {
			return err
		}
		if err := markSuspect(ctx, st, p, rep.ScorerHealth); err != nil {
			return err
		}
		var candidates []string
		for _, c := range rep.Candidates {
			if c.RunID != 0 {
				candidates = append(candidates, c.Candidate)
			}
		}
		states, err := CheckKill(ctx, st, p, candidates)
		if err != nil {
			return err
		}
		for _, s := range states {
			if s.Fired || s.Error != "" {
				rep.KillCriteria = append(rep.KillCriteria, verify.FiredCriterion{Name: s.Name, Fired: s.Fired, Candidate: s.Candidate,
					RunID: s.RunID, Message: s.Message, New: s.New, Error: s.Error})
			}
		}
		return nil
	}
}

// SuspectScorers are the scorers of units whose reviews (of the same
// binary, against p) make them suspect by p's thresholds.
func SuspectScorers(ctx context.Context, st *store.Store, p *pack.Pack, units verify.Units) ([]ScorerStat, error) {
	out := []ScorerStat{}
	if st == nil {
		return out, nil
	}
	stats, err := Stats(ctx, st, p.SHA256, PackThresholds(p))
	if err != nil {
		return nil, err
	}
	for _, u := range units.Scorers {
		for _, s := range stats {
			if s.Scorer == u.ID && s.SHA256 == u.SHA256 && s.Status == StatusSuspect {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// markSuspect sets the health of every scorer whose reviews (of the same
// binary) make it suspect; the probe's status stays in the reason.
func markSuspect(ctx context.Context, st *store.Store, p *pack.Pack, hs []verify.ScorerHealth) error {
	var units verify.Units
	for _, h := range hs {
		units.Scorers = append(units.Scorers, verify.ScorerRef{ID: h.ID, Version: h.Version, SHA256: h.SHA256})
	}
	suspect, err := SuspectScorers(ctx, st, p, units)
	if err != nil {
		return err
	}
	for i := range hs {
		for _, s := range suspect {
			if s.Scorer == hs[i].ID && s.SHA256 == hs[i].SHA256 {
				hs[i].Reason = "review: " + s.Reason + "; " + hs[i].Status + ": " + hs[i].Reason
				hs[i].Status = verify.HealthSuspect
			}
		}
	}
	return nil
}
