package cli

import (
	"encoding/json"
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
		UsageText: "assay pack validate [--format text|json] PACK...\n\n" +
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
			"[{file, valid, diagnostics: [...]}] instead.\n\n" +
			"Example:\n   assay pack validate packs/*.yaml\n" +
			"   assay --schema my-schema.json pack validate --format json packs/example.yaml",
		Flags:  []cli.Flag{formatFlag()},
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
	format, err := outputFormat(c)
	if err != nil {
		return err
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
		p, list := pack.Load(path, opts)
		r := packReport{File: path, Valid: p != nil, Diagnostics: list}
		if p != nil {
			r.SHA256, r.Tasks = p.SHA256, len(p.Tasks)
		} else {
			invalidCount++
		}
		reports = append(reports, r)
		if format == "text" {
			a.printPackReport(r)
		}
	}
	if format == "json" {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reports); err != nil {
			return hostErr(fmt.Errorf("writing the report: %w", err))
		}
	} else if len(reports) > 1 {
		fmt.Fprintf(a.stdout, "%d of %d packs valid\n", len(reports)-invalidCount, len(reports))
	}
	if invalidCount > 0 {
		return &ExitError{Code: ExitInvalid}
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
