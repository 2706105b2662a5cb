package cli

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/verify"
	"github.com/assay-eval/assay/pkg/excerpt"
)

func (a *app) scorersProbeCommand() *cli.Command {
	return &cli.Command{
		Name:  "probe",
		Usage: "re-score a seeded sample of stored turns K times to find nondeterministic scorers",
		UsageText: `assay scorers probe --pack P [--candidate C] [--sample N] [--repeat K] [--seed S]
                    [--db URL] [--in-process] [--format text|json]

Draws N stored turns of the pack (of candidate C only, when given) with seed S,
scores each K times from its stored evidence with the installed scorers, and
reports per scorer: nondeterministic when the repeats differ;
changed_without_version_change when the result differs from the stored one
while the scorer's version is the one that produced it; ok otherwise; not_probed
when no sampled turn uses it. The results are recorded: assay doctor shows each
scorer's last probe and verify flags a nondeterministic scorer in scorer_health
(docs/evidence.md). Exits 1 when a scorer is flagged.

Example:
   assay scorers probe --pack packs/example.yaml --sample 50 --repeat 3 --seed 1`,
		Flags: []cli.Flag{
			packFlag(),
			&cli.StringFlag{Name: "candidate", Usage: "probe only candidate `ID`'s turns"},
			&cli.IntFlag{Name: "sample", Value: 20, Usage: "stored turns to sample"},
			&cli.IntFlag{Name: "repeat", Value: 3, Usage: "times each sampled turn is scored"},
			&cli.Int64Flag{Name: "seed", Value: 1, Usage: "sampling seed"},
			&cli.BoolFlag{Name: "in-process", Usage: "run the built-in scorers inside the host"},
			callTimeoutFlag(),
			formatFlag(),
		},
		Action: a.scorersProbe,
	}
}

func (a *app) scorersProbe(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	if c.Int("sample") < 1 || c.Int("repeat") < 2 {
		return invalidf("--sample must be at least 1 and --repeat at least 2")
	}
	s, err := a.openSession(c, c.String("pack"), true, c.Bool("in-process"))
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.start(c.Context); err != nil {
		return err
	}
	skipped := []verify.ProbeSkip{}
	health, err := verify.Probe(c.Context, verify.ProbeRequest{Engine: s.engineConfig(64, a.logger(), nil),
		Candidate: c.String("candidate"), Sample: c.Int("sample"), Repeat: c.Int("repeat"), Seed: c.Int64("seed"),
		Skipped: func(k verify.ProbeSkip) {
			skipped = append(skipped, k)
			fmt.Fprintf(a.stderr, "warning: probe: skipped %s (run %d): %s\n", k.Label, k.RunID, excerpt.EscapeLine(k.Reason))
		}})
	if err != nil {
		return verifyErr(err)
	}
	if format == "json" {
		if err := printJSON(a.stdout, struct {
			ScorerHealth []verify.ScorerHealth `json:"scorer_health"`
			Skipped      []verify.ProbeSkip    `json:"skipped"`
		}{health, skipped}); err != nil {
			return err
		}
	} else {
		printHealth(a.stdout, health, true)
	}
	for _, h := range health {
		if h.Flagged() {
			return &ExitError{Code: ExitGate}
		}
	}
	return nil
}

// printHealth prints scorer health: every scorer, or only the flagged.
func printHealth(w io.Writer, hs []verify.ScorerHealth, all bool) {
	for _, h := range hs {
		switch {
		case h.Flagged():
			fmt.Fprintf(w, "WARNING: scorer %s v%s (sha256 %s) is %s: %s\n", h.ID, h.Version, short(h.SHA256), h.Status, h.Reason)
		case all:
			fmt.Fprintf(w, "scorer %s v%s (sha256 %s): %s: %s\n", h.ID, h.Version, short(h.SHA256), h.Status, h.Reason)
		}
	}
}
