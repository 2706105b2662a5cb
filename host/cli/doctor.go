package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/invariant"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/pluginhost"
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
	OK        bool             `json:"ok"`
	Places    []doctorPlace    `json:"places"`
	Invariant doctorInvariant  `json:"invariant"`
	Plugins   []doctorPlugin   `json:"plugins"`
	Elapsed   float64          `json:"elapsed_ms"`
	report    invariant.Report `json:"-"`
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
	rep := a.runDoctor(ctx, startupConfigOf(c, false))
	if format == "json" {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
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

// runDoctor gathers every check; it never stops at the first problem.
func (a *app) runDoctor(ctx context.Context, cfg startupConfig) *doctorReport {
	start := time.Now()
	rep := &doctorReport{OK: true}
	fail := func(p *doctorPlace, err error) {
		p.OK, p.Error, rep.OK = false, err.Error(), false
	}

	mp := doctorPlace{Place: "manifest", Source: pluginhost.ManifestFile, OK: true}
	m, err := pluginhost.LoadManifest(cfg.pluginDir)
	if err != nil {
		fail(&mp, err)
	} else {
		mp.Source, mp.Scorers = m.Path(), manifestIDs(m)
		if len(m.Entries) == 0 {
			fail(&mp, fmt.Errorf("no plugins registered: build them (make build) or run `assay plugins register BIN`"))
		}
	}

	sp := doctorPlace{Place: "schema enum", Source: "embedded", OK: true}
	schema := pack.EmbeddedSchema()
	if cfg.schemaPath != "" {
		sp.Source = cfg.schemaPath
		if schema, err = pack.LoadSchema(cfg.schemaPath); err != nil {
			fail(&sp, err)
		}
	}
	if schema != nil {
		sp.Scorers = schema.ScorerEnum()
	}

	dp := doctorPlace{Place: "DB enum", Source: store.Redact(cfg.dsn), OK: true}
	haveDB := dbExists(cfg.dsn)
	if haveDB {
		st, err := store.Open(ctx, cfg.dsn)
		if err != nil {
			fail(&dp, err)
		} else {
			dp.Source = st.Dialect().String() + " " + store.Redact(cfg.dsn)
			dp.Scorers, err = st.ScorerEnum(ctx)
			switch {
			case errors.Is(err, store.ErrNoScorerConstraint):
				// As in the startup check: no constraint is an empty enum,
				// so every scorer is reported missing and sync adds it.
				dp.Scorers, dp.Error = []string{}, err.Error()+" (assay scorers sync adds it)"
			case err != nil:
				fail(&dp, err)
			}
			st.Close()
		}
	} else {
		dp.Error = "no database yet (the first command that stores results creates it)"
	}
	rep.Places = []doctorPlace{mp, sp, dp}

	if mp.OK && sp.OK && dp.OK {
		db := dp.Scorers
		if !haveDB {
			db = mp.Scorers
		}
		rep.report = invariant.Check(mp.Scorers, sp.Scorers, db)
		rep.Invariant.OK = rep.report.OK()
		for _, d := range rep.report.Differences {
			rep.Invariant.Differences = append(rep.Invariant.Differences, d.String())
		}
		rep.Invariant.Fix = rep.report.Fix()
		if !rep.report.OK() {
			rep.OK = false
		}
	} else {
		rep.OK = false
		rep.Invariant.Fix = "fix the places above first"
	}

	if m != nil {
		rep.Plugins = a.checkPlugins(ctx, m)
		for _, p := range rep.Plugins {
			if !p.OK {
				rep.OK = false
			}
		}
	}
	rep.Elapsed = ms(time.Since(start))
	return rep
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
