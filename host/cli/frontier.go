package cli

import (
	"encoding/json"
	"fmt"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/governance"
	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
)

func (a *app) frontierCommand() *cli.Command {
	return &cli.Command{
		Name:  "frontier",
		Usage: "the stored Pareto frontier of every candidate verified against a pack",
		UsageText: `assay frontier --pack P [--db URL] [--format text|json]

Reads every run recorded for the pack (by its sha256) and computes the Pareto
frontier of the eligible candidates scored with the current scorer version.
Candidates scored by other scorer versions are listed apart, never mixed in,
each with a drift banner naming every scorer that differs. Among the current
ones, runs whose policy or skill version differs from the most recent run's are
listed apart too, with their drift (docs/evidence.md).

Example:
   assay frontier --pack packs/example.yaml`,
		Flags: []cli.Flag{
			packFlag(),
			formatFlag(),
		},
		Action: a.frontier,
	}
}

// frontierReport is `assay frontier --format json`.
type frontierReport struct {
	Pack          verify.PackRef    `json:"pack"`
	ScorerVersion string            `json:"scorer_version"`
	Candidates    []storedCandidate `json:"candidates"`
	Frontier      []string          `json:"frontier"`
	// NotDistinguishable are the frontier pairs whose mean intervals overlap.
	NotDistinguishable [][2]string       `json:"frontier_not_distinguishable"`
	OtherVersions      []storedCandidate `json:"other_scorer_versions"`
	// OtherUnits are runs of the current scorer version whose policy or
	// skill version differs from the most recent run's.
	OtherUnits []storedCandidate `json:"other_units"`
	// Drift is every drift line of the runs kept apart.
	Drift []verify.Drift `json:"drift"`
	// SuspectScorers are the scorers of the listed runs whose review
	// override rate makes them suspect (docs/governance.md).
	SuspectScorers []governance.ScorerStat `json:"suspect_scorers"`
}

type storedCandidate struct {
	Candidate     string         `json:"candidate"`
	RunID         int64          `json:"run_id"`
	ScorerVersion string         `json:"scorer_version"`
	Summary       score.Summary  `json:"summary"`
	Drift         []verify.Drift `json:"drift,omitempty"` // how its units differ from the frontier's
	units         verify.Units
	updated       time.Time
}

func (a *app) frontier(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	s, err := a.openSession(c, c.String("pack"), true, false)
	if err != nil {
		return err
	}
	defer s.close()
	runs, err := s.rt.store.Runs(c.Context, s.pack.SHA256)
	if err != nil {
		return hostErr(err)
	}
	rep := frontierReport{
		Pack:          verify.PackRef{Name: s.pack.Name(), Path: s.pack.Path, SHA256: s.pack.SHA256},
		ScorerVersion: s.scorerVersion,
		Candidates:    []storedCandidate{},
		Frontier:      []string{},
		OtherVersions: []storedCandidate{},
		OtherUnits:    []storedCandidate{},
		Drift:         []verify.Drift{},
	}
	units := verify.ConfigUnits(s.engineConfig(0, nil, nil))
	if err := rep.split(runs, units); err != nil {
		return hostErr(err)
	}
	if rep.SuspectScorers, err = governance.SuspectScorers(c.Context, s.rt.store, s.pack, rep.scorerUnits()); err != nil {
		return hostErr(err)
	}
	var current []score.Summary
	for _, sc := range rep.Candidates {
		current = append(current, sc.Summary)
	}
	sort.Slice(rep.Candidates, func(i, j int) bool { return rep.Candidates[i].Candidate < rep.Candidates[j].Candidate })
	rep.Frontier = verify.Frontier(s.pack.Scoring.ParetoFilter, current)
	rep.NotDistinguishable = verify.NotDistinguishable(rep.Frontier, current)
	if format == "json" {
		return printJSON(a.stdout, rep)
	}
	a.printStoredFrontier(&rep)
	return nil
}

// printStoredFrontier prints `assay frontier` as text.
func (a *app) printStoredFrontier(rep *frontierReport) {
	fmt.Fprintf(a.stdout, "pack %s (sha256 %s), scorer version %s\n", rep.Pack.Name, short(rep.Pack.SHA256), short(rep.ScorerVersion))
	for _, sc := range rep.SuspectScorers {
		fmt.Fprintf(a.stdout, "SUSPECT SCORER: %s v%s (sha256 %s): %s; the scores below rest on it\n", sc.Scorer, sc.Version, short(sc.SHA256), sc.Reason)
	}
	onFrontier := map[string]bool{}
	for _, f := range rep.Frontier {
		onFrontier[f] = true
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 2, 2, ' ', 0)
	if len(rep.Candidates) > 0 {
		fmt.Fprintln(tw, "CANDIDATE\tRUN\tMEAN\tFINALIZE\tERRORS\tLATENCY\tTOOLS\tCOST\tELIGIBLE\tFRONTIER")
	}
	for _, sc := range rep.Candidates {
		m := sc.Summary
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%s\t%.3f\t%s\t%t\t%t\n", sc.Candidate, sc.RunID, m.MeanScore, m.FinalizeRate,
			m.ErrorRate, secs(m.MeanLatencyS), m.MeanToolCalls, usd(m.MeanCostUSD), m.Eligible, onFrontier[sc.Candidate])
	}
	tw.Flush()
	if len(rep.Candidates) == 0 {
		fmt.Fprintln(a.stdout, "no candidate has been verified against this pack with the current scorer version")
	}
	for _, p := range rep.NotDistinguishable {
		fmt.Fprintf(a.stdout, "%s and %s: not distinguishable on this data (their mean score intervals overlap)\n", p[0], p[1])
	}
	if len(rep.OtherVersions) > 0 {
		fmt.Fprintf(a.stdout, "\nscored by other scorer versions (not comparable, not on the frontier):\n")
		for _, sc := range rep.OtherVersions {
			fmt.Fprintf(a.stdout, "  %s (run %d, scorer version %s): mean score %.3f\n", sc.Candidate, sc.RunID, short(sc.ScorerVersion), sc.Summary.MeanScore)
			printDrift(a.stdout, "    ", sc.Drift)
		}
	}
	if len(rep.OtherUnits) > 0 {
		fmt.Fprintf(a.stdout, "\nrun with another policy or skill version (not comparable, not on the frontier):\n")
		for _, sc := range rep.OtherUnits {
			fmt.Fprintf(a.stdout, "  %s (run %d): mean score %.3f\n", sc.Candidate, sc.RunID, sc.Summary.MeanScore)
			printDrift(a.stdout, "    ", sc.Drift)
		}
	}
}

// scorerUnits are the scorers every listed run was scored with, each
// binary once.
func (rep *frontierReport) scorerUnits() verify.Units {
	var u verify.Units
	seen := map[verify.ScorerRef]bool{}
	listed := append(append(append([]storedCandidate{}, rep.Candidates...), rep.OtherVersions...), rep.OtherUnits...)
	for _, sc := range listed {
		for _, r := range sc.units.Scorers {
			if !seen[r] {
				seen[r] = true
				u.Scorers = append(u.Scorers, r)
			}
		}
	}
	return u
}

// split sorts the pack's finished runs into the current ones (the scorer
// version of cur, and the policy and skill version of the most recent such
// run), and those kept apart, each with its drift from the current units.
func (rep *frontierReport) split(runs []store.RunRow, cur verify.Units) error {
	var same []storedCandidate
	for _, r := range runs {
		if len(r.Summary) == 0 {
			continue // a run that never finished has no summary
		}
		var sum score.Summary
		if err := json.Unmarshal(r.Summary, &sum); err != nil {
			return fmt.Errorf("reading the summary of run %d: %w", r.ID, err)
		}
		sc := storedCandidate{Candidate: r.Candidate, RunID: r.ID, ScorerVersion: r.ScorerVersion, Summary: sum,
			units: verify.RunUnits(r), updated: r.UpdatedAt}
		if r.ScorerVersion == cur.ScorerVersion {
			same = append(same, sc)
			continue
		}
		scorers := sc.units
		scorers.PolicyVersion, scorers.SkillVersion = "", "" // the scorers differ; the harness is compared below
		sc.Drift = verify.DriftBetween(cur, scorers)
		rep.OtherVersions = append(rep.OtherVersions, sc)
		rep.Drift = append(rep.Drift, sc.Drift...)
	}
	var latest storedCandidate
	for _, sc := range same {
		if latest.RunID == 0 || sc.updated.After(latest.updated) {
			latest = sc
		}
	}
	harness := func(u verify.Units) verify.Units {
		return verify.Units{PolicyVersion: u.PolicyVersion, SkillVersion: u.SkillVersion}
	}
	for _, sc := range same {
		if sc.Drift = verify.DriftBetween(harness(latest.units), harness(sc.units)); len(sc.Drift) == 0 {
			rep.Candidates = append(rep.Candidates, sc)
			continue
		}
		rep.OtherUnits = append(rep.OtherUnits, sc)
		rep.Drift = append(rep.Drift, sc.Drift...)
	}
	return nil
}
