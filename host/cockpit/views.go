package cockpit

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
)

// page is what every template renders.
type page struct {
	Title, Nav, Company, CSRF, Error string
	Static                           bool   // the HTML report: no links to server pages, no forms
	Generated                        string // the report's time

	Packs     []packView
	Run       *runView
	Runs      []runView
	Compare   *compareView
	Compares  []compareView
	PackNames []string

	// The governance pages.
	Queue      []reviewItem
	Recorded   int64 // the turn whose review was just recorded
	Scorers    []scorerView
	Probes     []store.ProbeRow
	Promotions []promotionView

	// The turn page.
	RunID     int64
	Revision  int
	Turn      *verify.TurnResult
	TraceNote string
	Timeline  *timelineView
	Before    string
	After     string
}

// packView is one pack's overview.
type packView struct {
	Name, SHA256 string
	// Recorded: verified from the command line into this database, not
	// uploaded; its file is not stored, so the frontier takes the default
	// pareto_filter (true) and the page says so.
	Recorded bool
	// Older counts a recorded pack's earlier versions with runs, not shown.
	Older      int
	Banners    []string
	Candidates []candidateView
	Frontier   []string
}

// candidateView is a candidate's latest run in the overview.
type candidateView struct {
	RunID       int64
	Candidate   string
	Status      string
	Verdict     string
	MeanScore   float64
	GatesPassed bool
	FailedGates []string
	Frontier    bool
	Updated     string
	summary     score.Summary
}

// runView is the run page.
type runView struct {
	RunID     int64
	Candidate string
	Attempt   int
	Pack      string
	Summary   score.Summary
	Verdict   string
	Histogram template.HTML
	Filter    store.TurnFilter
	Statuses  []string
	Turns     []verify.TurnResult
	First     string // the first page's link, on a later page
	Next      string
	More      string
	Static    bool
}

func funcs() template.FuncMap {
	return template.FuncMap{
		"num": func(p *float64) string {
			if p == nil {
				return "–"
			}
			return fmt.Sprintf("%.3f", *p)
		},
		"secs": func(p *float64) string {
			if p == nil {
				return "–"
			}
			return fmt.Sprintf("%.1fs", *p)
		},
		"anyNum": func(v any) string {
			if f, ok := v.(float64); ok {
				return fmt.Sprintf("%.3f", f)
			}
			return fmt.Sprint(v)
		},
		"delta": func(p *float64) string {
			if p == nil {
				return "–"
			}
			return fmt.Sprintf("%+.3f", *p)
		},
		"deltaClass": func(p *float64) string {
			switch {
			case p == nil || *p == 0:
				return ""
			case *p > 0:
				return "pos"
			}
			return "neg"
		},
		"verdictClass": func(v string) string {
			switch {
			case v == "PASS":
				return "pass"
			case strings.HasPrefix(v, "PASS"):
				return "warn"
			}
			return "fail"
		},
		"join":    strings.Join,
		"short":   shortSHA,
		"runLink": func(id int64) string { return fmt.Sprintf("/runs/%d", id) },
		"turnLink": func(id int64, label string) string {
			return fmt.Sprintf("/runs/%d/turns/%s", id, template.URLQueryEscaper(label))
		},
	}
}

// histogramSVG draws bin counts over [0,1] as an inline SVG bar chart.
func histogramSVG(bins []int) template.HTML {
	const w, h, pad = 420, 120, 18
	peak := 1
	total := 0
	for _, n := range bins {
		peak = max(peak, n)
		total += n
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="distribution of %d turn scores">`, w, h+pad, total)
	bw := float64(w) / float64(len(bins))
	for i, n := range bins {
		bh := float64(h) * float64(n) / float64(peak)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#3f6fd8"><title>%.1f–%.1f: %d</title></rect>`,
			float64(i)*bw+1, float64(h)-bh, bw-2, bh, float64(i)/float64(len(bins)), float64(i+1)/float64(len(bins)), n)
	}
	fmt.Fprintf(&b, `<text x="0" y="%d" font-size="11">0</text><text x="%d" y="%d" font-size="11" text-anchor="end">1</text></svg>`, h+14, w, h+14)
	return template.HTML(b.String()) // built from numbers only
}
