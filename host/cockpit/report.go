package cockpit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/store"
)

// ErrNoRun is Report's error for a candidate with no stored run of the pack.
var ErrNoRun = errors.New("no stored run")

// Report writes `assay report --html`: one self-contained HTML file (inline
// CSS and SVG, no script) with the pack's overview, the run page of every
// candidate (all tasks), and each candidate compared with the first. With
// candidates, only those are included; one without a stored run of the pack
// is an error.
func Report(ctx context.Context, w io.Writer, st *store.Store, p *pack.Pack, candidates []string, now time.Time) error {
	pv, runs, err := packOverview(ctx, st, p.Name(), p.SHA256, p.Scoring.ParetoFilter)
	if err != nil {
		return err
	}
	if len(candidates) > 0 {
		byCand := map[string]store.RunRow{}
		for _, r := range runs {
			byCand[r.Candidate] = r
		}
		picked := make([]store.RunRow, 0, len(candidates))
		var missing []string
		for _, c := range candidates {
			r, ok := byCand[c]
			if !ok {
				missing = append(missing, c)
			}
			picked = append(picked, r)
		}
		if len(missing) > 0 {
			return fmt.Errorf("%w of pack %s for candidate %s; it has %s", ErrNoRun, p.Name(), strings.Join(missing, ", "), joinOr(candidatesOf(runs)))
		}
		runs = picked
	}
	pg := &page{Title: "Report " + p.Name(), Static: true, Generated: now.UTC().Format(time.RFC3339), Packs: []packView{pv}}
	for _, r := range runs {
		rv, err := runPage(ctx, st, nil, r, store.TurnFilter{}, 0)
		if err != nil {
			return err
		}
		rv.Static = true
		pg.Runs = append(pg.Runs, rv)
	}
	for _, r := range runs[min(1, len(runs)):] {
		cv, err := compareRuns(ctx, st, p.Name(), runs[0], r)
		if err != nil {
			return err
		}
		pg.Compares = append(pg.Compares, cv)
	}
	c := &Cockpit{pages: parsePages(), log: hclog.NewNullLogger()}
	if err := c.pages["report"].ExecuteTemplate(w, "layout", pg); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}
