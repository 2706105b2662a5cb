package cli

import (
	"fmt"
	"github.com/assay-eval/assay/host/kpi"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/pkg/diag"
)

func (a *app) packCommand() *cli.Command {
	return &cli.Command{
		Name:  "pack",
		Usage: "work with eval packs",
		UsageText: "assay pack validate [--format text|json|github|sarif] PACK...\n\n" +
			"Example:\n   assay pack validate packs/example.yaml packs/support-desk.yaml",
		Subcommands: []*cli.Command{a.packValidateCommand()},
	}
}

func (a *app) packValidateCommand() *cli.Command {
	return &cli.Command{
		Name:      "validate",
		Usage:     "check eval packs against the schema and the pack rules; exit 0 when all are valid, 2 otherwise",
		ArgsUsage: "PACK...",
		UsageText: "assay pack validate [--format text|json] PACK...\n\n" +
			"Every problem of every pack is reported at once, as file:line:col: code: message\n" +
			"with the source line and a caret; --format json prints\n" +
			"[{file, valid, diagnostics: [...]}] instead; --format github prints GitHub Actions\n" +
			"annotations (::error file=F,line=L,col=C,title=CODE::message) and --format sarif\n" +
			"a SARIF 2.1.0 log on stdout (docs/ci.md).\n\n" +
			"Example:\n   assay pack validate packs/*.yaml\n" +
			"   assay --schema my-schema.json pack validate --format json packs/example.yaml",
		Flags:  []cli.Flag{&cli.StringFlag{Name: flagFormat, Value: "text", Usage: "output `FORMAT`: text, json, github or sarif"}},
		Action: a.packValidate,
	}
}

// packReport is one pack's entry in `pack validate --format json`.
type packReport struct {
	File        string    `json:"file"`
	Valid       bool      `json:"valid"`
	SHA256      string    `json:"sha256,omitempty"`
	Tasks       int       `json:"tasks,omitempty"`
	Diagnostics diag.List `json:"diagnostics"`
}

func (a *app) packValidate(c *cli.Context) error {
	format := c.String(flagFormat)
	switch format {
	case "text", "json", "github", "sarif":
	default:
		return invalidf("--format: want text, json, github or sarif, got %q", format)
	}
	if c.NArg() == 0 {
		return invalidf("pack validate: name at least one PACK file")
	}
	// Packs are checked against what is installed: the startup check first,
	// then the installed scorers' KPI keys and the CEL compiler.
	rt, err := a.startup(c, false)
	if err != nil {
		return err
	}
	defer rt.close()
	opts := packOptions(rt, kpi.NewChecker())
	reports := make([]packReport, 0, c.NArg())
	invalidCount := 0
	for _, path := range c.Args().Slice() {
		// The tasks are checked as they are read, never all held.
		s, list := pack.Validate(path, opts)
		r := packReport{File: path, Valid: s != nil, Diagnostics: list}
		if s != nil {
			r.SHA256, r.Tasks = s.SHA256, s.Tasks
		} else {
			invalidCount++
		}
		reports = append(reports, r)
		if format == "text" {
			a.printPackReport(r)
		}
	}
	if err := a.writePackReports(format, reports, invalidCount); err != nil {
		return hostErr(err)
	}
	if invalidCount > 0 {
		return &ExitError{Code: ExitInvalid}
	}
	return nil
}

// writePackReports writes the reports in a format other than text (which
// printPackReport prints pack by pack), or text's closing count.
func (a *app) writePackReports(format string, reports []packReport, invalidCount int) error {
	var all diag.List
	for _, r := range reports {
		all = append(all, r.Diagnostics...)
	}
	switch format {
	case "json":
		if err := printJSON(a.stdout, reports); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
	case "github":
		return diag.WriteGitHub(a.stdout, all)
	case "sarif":
		return diag.WriteSARIF(a.stdout, diag.SARIFTool{Name: "assay", Version: ReadBuildInfo().Version,
			InformationURI: "https://github.com/assay-eval/assay", HelpURI: "https://github.com/assay-eval/assay/blob/main/docs/pack.md#load-rules"}, all)
	default:
		if len(reports) > 1 {
			fmt.Fprintf(a.stdout, "%d of %d packs valid\n", len(reports)-invalidCount, len(reports))
		}
	}
	return nil
}

func (a *app) printPackReport(r packReport) {
	if len(r.Diagnostics) > 0 {
		fmt.Fprint(a.stdout, r.Diagnostics.Render(map[string][]byte{r.File: readForRender(r.File)}))
	}
	if r.Valid {
		fmt.Fprintf(a.stdout, "%s: valid (%d tasks)\n", r.File, r.Tasks)
		return
	}
	n := len(r.Diagnostics.Errors())
	noun := "problems"
	if n == 1 {
		noun = "problem"
	}
	fmt.Fprintf(a.stdout, "%s: invalid (%d %s)\n", r.File, n, noun)
}

// readForRender reads a pack again to show source lines under its
// diagnostics; a file too large or unreadable is shown without them.
func readForRender(path string) []byte {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > pack.MaxSize {
		return nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return src
}
