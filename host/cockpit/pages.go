package cockpit

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
)

// maxSnapshotShown bounds a snapshot printed on the turn page.
const maxSnapshotShown = 64 << 10

func (c *Cockpit) base(r *http.Request, t store.Token, title, nav string) *page {
	return &page{Title: title, Nav: nav, Company: t.Company, CSRF: c.csrfFor(r)}
}

func (c *Cockpit) overview(w http.ResponseWriter, r *http.Request, t store.Token) {
	p := c.base(r, t, "Overview", "overview")
	packs, err := c.cfg.Store.ServerPacks(r.Context(), t.Company)
	if err != nil {
		c.fail(w, err)
		return
	}
	recorded, err := c.cfg.Store.RecordedPacks(r.Context(), t.Company)
	if err != nil {
		c.fail(w, err)
		return
	}
	// The uploaded packs, then those verified from the command line,
	// whose file the server does not hold (pareto_filter's default).
	type ref struct {
		name, sha        string
		pareto, recorded bool
		older            int
	}
	refs := make([]ref, 0, len(packs)+len(recorded))
	for _, sp := range packs {
		pareto := true
		if pk := c.loadPack(r, t, sp.Name); pk != nil {
			pareto = pk.Scoring.ParetoFilter
		}
		refs = append(refs, ref{name: sp.Name, sha: sp.SHA256, pareto: pareto})
	}
	for _, rp := range recorded {
		refs = append(refs, ref{name: rp.Name, sha: rp.SHA256, pareto: true, recorded: true, older: rp.Older})
	}
	for _, rf := range refs {
		pv, _, err := packOverview(r.Context(), c.cfg.Store, rf.name, rf.sha, rf.pareto)
		if err != nil {
			c.fail(w, err)
			return
		}
		pv.Recorded, pv.Older = rf.recorded, rf.older
		p.Packs = append(p.Packs, pv)
	}
	c.render(w, "overview", p)
}

// runOf reads the {id} run when its pack is the company's; any other is 404.
func (c *Cockpit) runOf(w http.ResponseWriter, r *http.Request, t store.Token) (store.RunRow, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		notFound(w, "run "+r.PathValue("id"))
		return store.RunRow{}, false
	}
	run, err := c.cfg.Store.RunSummary(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		notFound(w, "run "+r.PathValue("id"))
		return store.RunRow{}, false
	} else if err != nil {
		c.fail(w, err)
		return store.RunRow{}, false
	}
	ok, err := c.cfg.Store.PackOfCompany(r.Context(), run.PackSHA256, t.Company)
	if err != nil {
		c.fail(w, err)
		return store.RunRow{}, false
	}
	if !ok {
		notFound(w, "run "+r.PathValue("id"))
	}
	return run, ok
}

func (c *Cockpit) run(w http.ResponseWriter, r *http.Request, t store.Token) {
	run, ok := c.runOf(w, r, t)
	if !ok {
		return
	}
	q := r.URL.Query()
	f := store.TurnFilter{Label: q.Get("label"), Status: q.Get("status"), After: q.Get("after")}
	rv, err := runPage(r.Context(), c.cfg.Store, c.hist, run, f, turnsPerPage)
	if err != nil {
		c.fail(w, err)
		return
	}
	p := c.base(r, t, "Run "+run.Candidate, "overview")
	p.Run = &rv
	c.render(w, "run", p)
}

func (c *Cockpit) turn(w http.ResponseWriter, r *http.Request, t store.Token) {
	run, ok := c.runOf(w, r, t)
	if !ok {
		return
	}
	label := r.PathValue("label")
	revs, err := c.cfg.Store.TurnRevisions(r.Context(), run.ID, run.Attempt, label)
	if err != nil {
		c.fail(w, err)
		return
	}
	if len(revs) == 0 {
		notFound(w, "turn "+label)
		return
	}
	row := revs[len(revs)-1]
	var tr verify.TurnResult
	if err := json.Unmarshal(row.Result, &tr); err != nil {
		c.fail(w, err)
		return
	}
	p := c.base(r, t, "Turn "+label, "overview")
	p.RunID, p.Revision, p.Turn = run.ID, row.Revision, &tr
	p.Timeline, p.TraceNote = c.timeline(r, row.TraceKeptBy(), row.TraceSHA256)
	p.Before = c.snapshot(r, row.StateBeforeSHA256)
	p.After = c.snapshot(r, row.StateAfterSHA256)
	c.render(w, "turn", p)
}

// snapshot is a stored snapshot, indented, cut at maxSnapshotShown (saying so).
func (c *Cockpit) snapshot(r *http.Request, sha string) string {
	if sha == "" {
		return ""
	}
	b, err := c.cfg.Store.Snapshot(r.Context(), sha)
	if err != nil {
		return "(snapshot " + sha + " could not be read: " + err.Error() + ")"
	}
	var v any
	if json.Unmarshal(b, &v) == nil {
		if ind, err := json.MarshalIndent(v, "", "  "); err == nil {
			b = ind
		}
	}
	if len(b) > maxSnapshotShown {
		return string(b[:maxSnapshotShown]) + "\n… (cut: the snapshot is " + strconv.Itoa(len(b)) + " bytes; the first " + strconv.Itoa(maxSnapshotShown) + " are shown)"
	}
	return string(b)
}

func (c *Cockpit) compare(w http.ResponseWriter, r *http.Request, t store.Token) {
	p := c.base(r, t, "Compare", "compare")
	packs, err := c.cfg.Store.ServerPacks(r.Context(), t.Company)
	if err != nil {
		c.fail(w, err)
		return
	}
	q := r.URL.Query()
	cv := &compareView{Pack: q.Get("pack"), A: q.Get("a"), B: q.Get("b")}
	p.Compare = cv
	for _, sp := range packs {
		p.PackNames = append(p.PackNames, sp.Name)
		if sp.Name != cv.Pack || cv.A == "" || cv.B == "" {
			continue
		}
		all, err := c.cfg.Store.RunSummaries(r.Context(), sp.SHA256)
		if err != nil {
			c.fail(w, err)
			return
		}
		byCand := map[string]store.RunRow{}
		for _, run := range latestRuns(all) {
			byCand[run.Candidate] = run
		}
		a, okA := byCand[cv.A]
		b, okB := byCand[cv.B]
		if !okA || !okB {
			cv.Note = "both candidates need a run of this pack; it has " + joinOr(candidatesOf(latestRuns(all)))
			break
		}
		got, err := compareRuns(r.Context(), c.cfg.Store, sp.Name, a, b)
		if err != nil {
			c.fail(w, err)
			return
		}
		*cv = got
	}
	c.render(w, "compare", p)
}

func joinOr(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
