package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/governance"
	"github.com/assay-eval/assay/host/invariant"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/host/queue"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/pkg/scorer"
)

func (a *app) doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check the three places scorer IDs live, and every plugin's sha256 and Describe",
		Description: `doctor runs the startup check (plugin manifest == schema enum == DB enum)
and launches every plugin in the manifest, in parallel, to check that its
binary still has the manifest's sha256 and that it describes itself as the
manifest says. It reports each as ok or not and exits 0 when all are ok, 3
otherwise. A SQLite database that does not exist yet is not created.`,
		UsageText: `assay [--plugin-dir DIR] [--schema FILE] [--db PATH|URL] doctor [--timeout D] [--format text|json]

Example:
  assay --plugin-dir bin/plugins doctor
  assay --db postgres://assay@db.internal/assay doctor --format json`,
		Flags: []cli.Flag{
			formatFlag(),
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "give up on the plugin checks after `D`"},
		},
		Action: a.doctor,
	}
}

// doctorReport is what doctor found; --format json prints it.
type doctorReport struct {
	OK        bool            `json:"ok"`
	Places    []doctorPlace   `json:"places"`
	Invariant doctorInvariant `json:"invariant"`
	Plugins   []doctorPlugin  `json:"plugins"`
	// Probes are each scorer's last `assay scorers probe` (docs/evidence.md).
	Probes []store.ProbeRow `json:"probes"`
	// Reviews are each reviewed scorer version's override rate and status
	// over every pack, by the default thresholds (docs/governance.md).
	Reviews []governance.ScorerStat `json:"reviews"`
	Queue   *queue.Status           `json:"queue,omitempty"` // Postgres only (docs/scale.md)
	Elapsed float64                 `json:"elapsed_ms"`
	report  invariant.Report        `json:"-"`
}

// doctorPlace is one of the three places and what it holds.
type doctorPlace struct {
	Place   string   `json:"place"`
	Source  string   `json:"source"`
	OK      bool     `json:"ok"`
	Scorers []string `json:"scorers"`
	Error   string   `json:"error,omitempty"`
}

type doctorInvariant struct {
	OK          bool     `json:"ok"`
	Differences []string `json:"differences,omitempty"`
	Fix         string   `json:"fix,omitempty"`
}

// doctorPlugin is one plugin's health.
type doctorPlugin struct {
	ID        string  `json:"id"`
	OK        bool    `json:"ok"`
	Binary    string  `json:"binary"`
	SHA256    string  `json:"sha256"`
	Version   string  `json:"version,omitempty"`
	KPIs      int     `json:"kpis"`
	Error     string  `json:"error,omitempty"`
	ElapsedMS float64 `json:"elapsed_ms"`
}

func (a *app) doctor(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	if c.NArg() > 0 {
		return invalidf("doctor: takes no arguments, got %q", c.Args().Slice())
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	rep := a.runDoctor(ctx, a.startupConfigOf(c, false))
	if format == "json" {
		if err := printJSON(a.stdout, rep); err != nil {
			return hostErr(fmt.Errorf("doctor: writing the report: %w", err))
		}
	} else {
		a.printDoctor(rep)
	}
	if !rep.OK {
		return &ExitError{Code: ExitHost}
	}
	return nil
}

// runDoctor gathers every check; it never stops at the first problem. The
// three places come from invariant.Load, as for the startup check, except
// that doctor never creates a SQLite file.
func (a *app) runDoctor(ctx context.Context, cfg invariant.Config) *doctorReport {
	start := time.Now()
	cfg.CreateDB = false
	p := invariant.Load(ctx, cfg)
	defer p.Close()
	rep := &doctorReport{OK: true, Places: doctorPlaces(p)}
	for _, pl := range rep.Places {
		if !pl.OK {
			rep.OK = false
		}
	}
	if rep.OK {
		rep.report = p.Report()
		rep.Invariant.OK = rep.report.OK()
		for _, d := range rep.report.Differences {
			rep.Invariant.Differences = append(rep.Invariant.Differences, d.String())
		}
		rep.Invariant.Fix = rep.report.Fix()
		rep.OK = rep.report.OK()
	} else {
		rep.Invariant.Fix = "fix the places above first"
	}
	if m := p.Manifest.Manifest; m != nil {
		rep.Plugins = a.checkPlugins(ctx, m)
		for _, pl := range rep.Plugins {
			if !pl.OK {
				rep.OK = false
			}
		}
	}
	if p.DB.Opened() {
		rep.Probes = lastProbes(ctx, p.DB.Store)
		rep.Reviews, _ = governance.Stats(ctx, p.DB.Store, "", governance.DefaultThresholds()) // unreadable: none shown
		rep.Queue = queueStatus(ctx, cfg.DSN)
	}
	rep.Elapsed = ms(time.Since(start))
	return rep
}

// lastProbes are each scorer's last probe, by scorer ID; none when they
// cannot be read (a database before migration 4 is migrated on first use).
func lastProbes(ctx context.Context, st *store.Store) []store.ProbeRow {
	m, err := st.LatestProbes(ctx)
	if err != nil {
		return []store.ProbeRow{}
	}
	out := make([]store.ProbeRow, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ScorerID < out[j].ScorerID })
	return out
}

// doctorPlaces reports each of the three places: what it holds, and any
// problem or note.
func doctorPlaces(p *invariant.Places) []doctorPlace {
	mp := doctorPlace{Place: string(invariant.Manifest), Source: p.Manifest.Source(), OK: true, Scorers: p.Manifest.IDs}
	switch {
	case p.Manifest.Err != nil:
		mp.OK, mp.Error = false, p.Manifest.Err.Error()
	case len(p.Manifest.IDs) == 0:
		mp.OK, mp.Error = false, "no plugins registered: build them (make build) or run `assay plugins register BIN`"
	}
	sp := doctorPlace{Place: string(invariant.Schema), Source: p.Schema.Source(), OK: p.Schema.Err == nil, Scorers: p.Schema.IDs}
	if p.Schema.Err != nil {
		sp.Error = p.Schema.Err.Error()
	}
	dp := doctorPlace{Place: string(invariant.DB), Source: p.DB.Source(), OK: p.DB.Err == nil, Scorers: p.DB.IDs}
	switch {
	case p.DB.Err != nil:
		dp.Error = p.DB.Err.Error()
	case !p.DB.Opened():
		dp.Error = p.DB.Skipped
	case !p.DB.Constraint:
		// An empty enum, not a broken place: every scorer is reported
		// missing there, and sync adds the constraint.
		dp.Error = store.ErrNoScorerConstraint.Error() + " (assay scorers sync adds it)"
	case p.DB.Created():
		dp.Error = "created now, with the manifest's scorers as its CHECK"
	}
	if p.DB.Opened() && p.DB.Store.OpenRetries() > 0 {
		dp.Error = strings.TrimPrefix(dp.Error+"; ", "; ") + fmt.Sprintf("opened after %d retries: the database was busy", p.DB.Store.OpenRetries())
	}
	return []doctorPlace{mp, sp, dp}
}

// checkPlugins launches every plugin of m in parallel, checking its sha256
// and its Describe against the manifest.
func (a *app) checkPlugins(ctx context.Context, m *pluginhost.Manifest) []doctorPlugin {
	h := pluginhost.New(m, pluginhost.WithLogger(a.logger()))
	defer h.Close()
	out := make([]doctorPlugin, len(m.Entries))
	var wg sync.WaitGroup
	for i, e := range m.Entries {
		out[i] = doctorPlugin{ID: string(e.ID), Binary: m.BinaryPath(e), SHA256: e.SHA256}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			p := &out[i]
			err := h.Verify(ctx, e.ID)
			var d scorer.Description
			if err == nil {
				d, err = h.Describe(ctx, e.ID)
			}
			p.ElapsedMS = ms(time.Since(start))
			if err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					err = fmt.Errorf("%w (raise --timeout?)", err)
				}
				p.Error = err.Error()
				return
			}
			p.OK, p.Version, p.KPIs = true, d.Version, len(d.KPIs)
		}()
	}
	wg.Wait()
	return out
}

func (a *app) printDoctor(rep *doctorReport) {
	mark := func(ok bool) string {
		if ok {
			return "ok  "
		}
		return "FAIL"
	}
	for _, p := range rep.Places {
		switch {
		case p.Error != "" && p.OK:
			fmt.Fprintf(a.stdout, "%s  %-11s %s: %s\n", mark(true), p.Place, p.Source, p.Error)
		case p.Error != "":
			fmt.Fprintf(a.stdout, "%s  %-11s %s: %s\n", mark(false), p.Place, p.Source, p.Error)
		case p.Place == "manifest":
			fmt.Fprintf(a.stdout, "%s  %-11s %s: %d plugins\n", mark(true), p.Place, p.Source, len(p.Scorers))
		default:
			fmt.Fprintf(a.stdout, "%s  %-11s %s: %d scorers\n", mark(true), p.Place, p.Source, len(p.Scorers))
		}
	}
	if rep.Invariant.OK {
		fmt.Fprintf(a.stdout, "%s  %-11s the manifest, the schema enum and the DB enum agree\n", mark(true), "invariant")
	} else {
		for _, d := range rep.Invariant.Differences {
			fmt.Fprintf(a.stdout, "%s  %-11s %s\n", mark(false), "invariant", d)
		}
		if len(rep.Invariant.Differences) == 0 {
			fmt.Fprintf(a.stdout, "%s  %-11s not checked\n", mark(false), "invariant")
		}
		fmt.Fprintf(a.stdout, "      %s\n", rep.Invariant.Fix)
	}
	for _, p := range rep.Plugins {
		if p.OK {
			fmt.Fprintf(a.stdout, "%s  plugin %-20s sha256 %s, describes itself as %s v%s with %d KPIs (%.0f ms)\n",
				mark(true), p.ID, shortHex(p.SHA256), p.ID, p.Version, p.KPIs, p.ElapsedMS)
			continue
		}
		fmt.Fprintf(a.stdout, "%s  plugin %-20s %s\n", mark(false), p.ID, p.Error)
	}
	printProbes(a.stdout, rep.Probes)
	printReviews(a.stdout, rep.Reviews)
	printQueue(a.stdout, rep.Queue)
	if rep.OK {
		fmt.Fprintf(a.stdout, "all checks passed (%.0f ms)\n", rep.Elapsed)
	} else {
		fmt.Fprintf(a.stdout, "some checks failed (%.0f ms)\n", rep.Elapsed)
	}
}

func shortHex(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// printProbes prints each scorer's last probe; a flagged one as warn.
func printProbes(w io.Writer, ps []store.ProbeRow) {
	if len(ps) == 0 {
		fmt.Fprintf(w, "%-4s  %-11s no scorer has been probed (assay scorers probe --pack P)\n", "note", "probe")
	}
	for _, p := range ps {
		mark := "ok  "
		if p.Status != store.ProbeOK {
			mark = "warn"
		}
		fmt.Fprintf(w, "%s  probe  %-20s %s (v%s, sha256 %s, %s): %s\n", mark, p.ScorerID, p.Status, p.Version,
			shortHex(p.SHA256), p.CreatedAt.UTC().Format("2006-01-02 15:04"), p.Reason)
	}
}

// printReviews prints each reviewed scorer version's status; a suspect one
// as warn. The thresholds are the defaults: a pack's may differ.
func printReviews(w io.Writer, rs []governance.ScorerStat) {
	if len(rs) == 0 {
		fmt.Fprintf(w, "%-4s  %-11s no turn has been reviewed (assay review sample --pack P --candidate C)\n", "note", "review")
		return
	}
	for _, r := range rs {
		mark := "ok  "
		if r.Status == governance.StatusSuspect {
			mark = "warn"
		}
		fmt.Fprintf(w, "%s  review %-20s %s (v%s, sha256 %s): %s\n", mark, r.Scorer, r.Status, r.Version, shortHex(r.SHA256), r.Reason)
	}
	fmt.Fprintf(w, "      review thresholds here are the defaults (rate %.2f, %d reviews); a pack's governance block may differ: assay review stats --pack P\n",
		pack.DefaultSuspectRate, pack.DefaultMinReviews)
}
