package cockpit

import (
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/host/governance"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/store"
)

// reviewItem is one open queue item on the review page.
type reviewItem struct {
	Pack string
	Turn governance.StoredTurn
}

// scorerView is one scorer version's review record and latest probe.
type scorerView struct {
	Pack  string
	Stat  governance.ScorerStat
	Probe *store.ProbeRow
}

// promotionView is one promotion record with its pack's name.
type promotionView struct {
	Pack string
	governance.Promotion
}

// companyPacks are the signed-in company's packs with their governance
// thresholds (the defaults when the pack cannot be loaded).
func (c *Cockpit) companyPacks(r *http.Request, t store.Token) ([]store.ServerPack, []governance.Thresholds, error) {
	packs, err := c.cfg.Store.ServerPacks(r.Context(), t.Company)
	if err != nil {
		return nil, nil, err
	}
	ths := make([]governance.Thresholds, len(packs))
	for i, sp := range packs {
		ths[i] = governance.DefaultThresholds()
		if pk := c.loadPack(r, t, sp.Name); pk != nil {
			ths[i] = governance.PackThresholds(pk)
		}
	}
	return packs, ths, nil
}

// loadPack loads the company's stored pack of that name; nil when it cannot
// be read or loaded (callers then use the defaults).
func (c *Cockpit) loadPack(r *http.Request, t store.Token, name string) *pack.Pack {
	if c.cfg.LoadPack == nil {
		return nil
	}
	full, err := c.cfg.Store.ServerPack(r.Context(), t.Company, name)
	if err != nil {
		return nil
	}
	pk, _ := c.cfg.LoadPack(name+".yaml", full.Source)
	return pk
}

func (c *Cockpit) review(w http.ResponseWriter, r *http.Request, t store.Token) {
	c.renderReview(w, r, t, "", http.StatusOK)
}

// renderReview renders the open queue of the company's packs, with msg
// (a refused submission) above it.
func (c *Cockpit) renderReview(w http.ResponseWriter, r *http.Request, t store.Token, msg string, status int) {
	packs, _, err := c.companyPacks(r, t)
	if err != nil {
		c.fail(w, err)
		return
	}
	p := c.base(r, t, "Review", "review")
	p.Error = msg
	if id, err := strconv.ParseInt(r.URL.Query().Get("recorded"), 10, 64); err == nil && msg == "" {
		p.Recorded = id
	}
	for _, sp := range packs {
		q, err := governance.OpenQueue(r.Context(), c.cfg.Store, sp.SHA256)
		if err != nil {
			c.fail(w, err)
			return
		}
		for _, st := range q {
			p.Queue = append(p.Queue, reviewItem{Pack: sp.Name, Turn: st})
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	c.render(w, "review", p)
}

// recordReview records the form's review of queue item {turn} through
// governance.RecordReview, the function behind `assay review record`. A
// turn not queued for one of the company's packs is 404; a refused review
// is shown and not recorded.
func (c *Cockpit) recordReview(w http.ResponseWriter, r *http.Request, t store.Token) {
	if !sameToken(c.csrfFor(r), r.PostFormValue("csrf")) {
		http.Error(w, "bad CSRF token", http.StatusForbidden)
		return
	}
	id, err := strconv.ParseInt(r.PathValue("turn"), 10, 64)
	if err != nil {
		notFound(w, "queued turn "+r.PathValue("turn"))
		return
	}
	sha, reviewed, queued, err := governance.QueuedTurn(r.Context(), c.cfg.Store, id)
	if err != nil {
		c.fail(w, err)
		return
	}
	mine := false
	if queued {
		if mine, err = c.cfg.Store.PackOfCompany(r.Context(), sha, t.Company); err != nil {
			c.fail(w, err)
			return
		}
	}
	if !mine {
		notFound(w, "queued turn "+r.PathValue("turn"))
		return
	}
	if reviewed {
		c.renderReview(w, r, t, "Turn "+r.PathValue("turn")+" has been reviewed already; nothing was recorded.", http.StatusConflict)
		return
	}
	rev := governance.Review{TurnID: id, Reviewer: r.PostFormValue("reviewer"), Verdict: r.PostFormValue("verdict"),
		Correct: r.PostFormValue("correct"), Reason: r.PostFormValue("reason")}
	if _, err := governance.RecordReview(r.Context(), c.cfg.Store, rev); err != nil {
		if refusal(err) {
			c.renderReview(w, r, t, "Not recorded: "+strings.ReplaceAll(err.Error(), "\n", "; "), http.StatusUnprocessableEntity)
			return
		}
		c.fail(w, err)
		return
	}
	http.Redirect(w, r, "/review?recorded="+strconv.FormatInt(id, 10), http.StatusSeeOther)
}

// refusal reports whether err is a reviewer's mistake, not the server's.
func refusal(err error) bool {
	for _, e := range []error{governance.ErrUnknownTurn, governance.ErrMissingCorrect, governance.ErrBlankReason,
		governance.ErrBlankReviewer, governance.ErrBadVerdict, governance.ErrBadCorrect, governance.ErrAgreeCorrect} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (c *Cockpit) scorers(w http.ResponseWriter, r *http.Request, t store.Token) {
	packs, ths, err := c.companyPacks(r, t)
	if err != nil {
		c.fail(w, err)
		return
	}
	probes, err := c.cfg.Store.LatestProbes(r.Context())
	if err != nil {
		c.fail(w, err)
		return
	}
	p := c.base(r, t, "Scorers", "scorers")
	for i, sp := range packs {
		stats, err := governance.Stats(r.Context(), c.cfg.Store, sp.SHA256, ths[i])
		if err != nil {
			c.fail(w, err)
			return
		}
		for _, s := range stats {
			sv := scorerView{Pack: sp.Name, Stat: s}
			if pr, ok := probes[s.Scorer]; ok {
				sv.Probe = &pr
			}
			p.Scorers = append(p.Scorers, sv)
		}
	}
	for _, pr := range probes {
		p.Probes = append(p.Probes, pr)
	}
	sort.Slice(p.Probes, func(i, j int) bool { return p.Probes[i].ScorerID < p.Probes[j].ScorerID })
	c.render(w, "scorers", p)
}

func (c *Cockpit) promotions(w http.ResponseWriter, r *http.Request, t store.Token) {
	packs, err := c.cfg.Store.ServerPacks(r.Context(), t.Company)
	if err != nil {
		c.fail(w, err)
		return
	}
	p := c.base(r, t, "Promotions", "promotions")
	for _, sp := range packs {
		ps, err := governance.Promotions(r.Context(), c.cfg.Store, sp.SHA256)
		if err != nil {
			c.fail(w, err)
			return
		}
		for _, pr := range ps {
			p.Promotions = append(p.Promotions, promotionView{Pack: sp.Name, Promotion: pr})
		}
	}
	c.render(w, "promotions", p)
}
