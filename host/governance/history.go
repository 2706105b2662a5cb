package governance

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/assay-eval/assay/host/kpi"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
)

// RecordHistory appends each verified candidate of rep to its run's
// history: one entry per run attempt, updated when the attempt is
// verified again (a resume).
func RecordHistory(ctx context.Context, st *store.Store, rep *verify.Report) error {
	for _, c := range rep.Candidates {
		if c.RunID == 0 {
			continue
		}
		run, err := st.RunSummary(ctx, c.RunID) // no turn count needed
		if err != nil {
			return fmt.Errorf("record run history: %w", err)
		}
		report, err := json.Marshal(c)
		if err != nil {
			return fmt.Errorf("record run history of run %d: %w", c.RunID, err)
		}
		_, err = st.DB().ExecContext(ctx, st.Rebind(`INSERT INTO company_eval_run_history
			(run_id, attempt, candidate, pack_sha256, scorer_version, units, report, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (run_id, attempt) DO UPDATE SET units = excluded.units, report = excluded.report`),
			run.ID, run.Attempt, run.Candidate, run.PackSHA256, run.ScorerVersion, string(jsonOr(run.Units, "{}")), string(report), time.Now().UTC())
		if err != nil {
			return fmt.Errorf("record run history of run %d: %w", c.RunID, err)
		}
	}
	return nil
}

func jsonOr(b []byte, empty string) []byte {
	if len(b) == 0 {
		return []byte(empty)
	}
	return b
}

// History returns the history of candidate against a pack, oldest first;
// every candidate's when candidate is empty.
func History(ctx context.Context, st *store.Store, packSHA256, candidate string) ([]Entry, error) {
	q := `SELECT run_id, attempt, candidate, units, report, created_at FROM company_eval_run_history WHERE pack_sha256 = ?`
	args := []any{packSHA256}
	if candidate != "" {
		q += ` AND candidate = ?`
		args = append(args, candidate)
	}
	rows, err := st.DB().QueryContext(ctx, st.Rebind(q+` ORDER BY created_at, id`), args...)
	if err != nil {
		return nil, fmt.Errorf("read run history: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		var units, report string
		if err := rows.Scan(&e.RunID, &e.Attempt, &e.Candidate, &units, &report, &e.CreatedAt); err != nil {
			return nil, fmt.Errorf("read run history: %w", err)
		}
		if err := json.Unmarshal([]byte(report), &e.Report); err != nil {
			return nil, fmt.Errorf("read run history of run %d: %w", e.RunID, err)
		}
		e.Units = verify.RunUnits(store.RunRow{Units: []byte(units), PackSHA256: packSHA256, ScorerVersion: e.Report.ScorerVersion})
		out = append(out, e)
	}
	return out, rows.Err()
}

// HistoryRuns is history as kill criteria see it.
func HistoryRuns(h []Entry) []kpi.HistoryRun {
	out := make([]kpi.HistoryRun, 0, len(h))
	for _, e := range h {
		s := e.Report.Summary
		r := kpi.HistoryRun{RunID: e.RunID, CreatedAt: e.CreatedAt, N: s.N, MeanScore: s.MeanScore,
			FinalizeRate: s.FinalizeRate, ErrorRate: s.ErrorRate, FailureTags: s.FailureTags,
			Verdict: string(e.Report.Verdict.Verdict), GatesPassed: s.Gates.Passed, ScorerVersion: s.ScorerVersion}
		if s.MeanLatencyS != nil {
			r.MeanLatencyS, r.HasLatency = *s.MeanLatencyS, true
		}
		if s.MeanCostUSD != nil {
			r.MeanCostUSD, r.HasCost = *s.MeanCostUSD, true
		}
		if r.FailureTags == nil {
			r.FailureTags = map[string]int{}
		}
		out = append(out, r)
	}
	return out
}

// Scorers is what review and the probe say of each scorer of units: the
// review stats of the same binary (sha256) and its latest probe.
func Scorers(ctx context.Context, st *store.Store, packSHA256 string, th Thresholds, units verify.Units) (map[string]ScorerFlag, map[string]kpi.ScorerReview, error) {
	stats, err := Stats(ctx, st, packSHA256, th)
	if err != nil {
		return nil, nil, err
	}
	probes, err := st.LatestProbes(ctx)
	if err != nil {
		return nil, nil, err
	}
	flags, reviews := map[string]ScorerFlag{}, map[string]kpi.ScorerReview{}
	for _, s := range units.Scorers {
		var f ScorerFlag
		var r kpi.ScorerReview
		for _, ss := range stats {
			if ss.Scorer == s.ID && ss.SHA256 == s.SHA256 {
				r.Reviews, r.OverrideRate = ss.Reviews, ss.OverrideRate
				if ss.Status == StatusSuspect {
					f.Suspect, r.Suspect, f.Why = true, true, "suspect: "+ss.Reason
				}
			}
		}
		if pr, ok := probes[s.ID]; ok && pr.SHA256 == s.SHA256 &&
			(pr.Status == store.ProbeNondeterministic || pr.Status == store.ProbeChangedSameVersion) {
			f.Nondeterministic, r.Nondeterministic = true, true
			f.Why = joinWhy(f.Why, pr.Status+": "+pr.Reason)
		}
		flags[s.ID], reviews[s.ID] = f, r
	}
	return flags, reviews, nil
}

func joinWhy(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
