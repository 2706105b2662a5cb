package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/cockpit"
)

func (a *app) reportCommand() *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "write one self-contained HTML report of a pack's stored runs",
		UsageText: `assay report --pack P [--candidate C]... --html FILE

The overview (gates, verdicts, mean scores, Pareto frontier), every candidate's
run page with all its tasks and a turn-score distribution, and each candidate
compared task by task with the first; inline CSS and SVG, no script, nothing
loaded from elsewhere: attach it to a CI run or an email (docs/serve.md).

Example:
   assay report --pack packs/example.yaml --candidate candidate-a --candidate candidate-c --html out/report.html`,
		Flags: []cli.Flag{
			packFlag(),
			&cli.StringSliceFlag{Name: "candidate", Usage: "candidate `ID` to include (repeatable; default every candidate)"},
			&cli.StringFlag{Name: "html", Required: true, Usage: "write the report to `FILE`"},
		},
		Action: a.report,
	}
}

func (a *app) report(c *cli.Context) error {
	s, err := a.openSession(c, c.String("pack"), true, false)
	if err != nil {
		return err
	}
	defer s.close()
	path := c.String("html")
	f, err := os.Create(path)
	if err != nil {
		return hostErr(fmt.Errorf("writing the report: %w", err))
	}
	if err := cockpit.Report(c.Context, f, s.rt.store, s.pack, c.StringSlice("candidate"), time.Now()); err != nil {
		f.Close()
		os.Remove(path)
		if errors.Is(err, cockpit.ErrNoRun) {
			return invalid(err)
		}
		return hostErr(err)
	}
	if err := f.Close(); err != nil {
		return hostErr(fmt.Errorf("writing the report: %w", err))
	}
	fmt.Fprintf(a.stderr, "report written to %s\n", path)
	return nil
}
