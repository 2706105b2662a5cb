package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/report"
	"github.com/assay-eval/assay/host/verify"
)

// ciFlags are verify's flags for CI outputs (docs/ci.md).
func ciFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "junit", Usage: "write a JUnit XML report to `FILE` (a suite per candidate, a case per task, then the gates)"},
		&cli.StringFlag{Name: "markdown", Usage: "write a GitHub-flavoured Markdown summary to `FILE` (e.g. $GITHUB_STEP_SUMMARY)"},
	}
}

// writeCIReports writes the JUnit and Markdown files verify was asked for.
func writeCIReports(c *cli.Context, rep *verify.Report, col *report.Collector) error {
	for _, out := range []struct {
		path  string
		write func(io.Writer, *verify.Report, *report.Collector) error
	}{{c.String("junit"), report.WriteJUnit}, {c.String("markdown"), report.WriteMarkdown}} {
		if out.path == "" {
			continue
		}
		if err := writeFileWith(out.path, func(w io.Writer) error { return out.write(w, rep, col) }); err != nil {
			return hostErr(err)
		}
	}
	return nil
}

// writeFileWith creates (or replaces) the file at path and fills it with write.
func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// inputCount counts the input forms given to verify.
func inputCount(given ...bool) int {
	n := 0
	for _, g := range given {
		if g {
			n++
		}
	}
	return n
}
