package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageErrorsExit2 (issue 12 item 6): every mistake on the command line
// is exit 2, on one line of stderr that names the command and its --help,
// with nothing on stdout (no help text before the error). Not parallel:
// urfave/cli writes its global help flag on every run.
func TestUsageErrorsExit2(t *testing.T) {
	const fx = "../../testdata/fixtures/"
	notAPlugin := filepath.Join(t.TempDir(), "my-scorer")
	if err := os.WriteFile(notAPlugin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string // substrings of stderr
	}{
		{"flag without its value", []string{"verify", "--pack"}, []string{"verify: flag --pack needs a value (see assay verify --help)"}},
		{"unknown flag", []string{"verify", "--bogus"}, []string{"verify: unknown flag --bogus (see assay verify --help)"}},
		{"misspelt flag", []string{"verify", "--pak", "p.yaml"}, []string{"unknown flag --pak; did you mean --pack?"}},
		{"unknown flag of a subcommand", []string{"pack", "validate", "--strict", "p.yaml"}, []string{"pack validate: unknown flag --strict"}},
		{"unknown global flag", []string{"--nope", "version"}, []string{"unknown flag --nope (see assay --help)"}},
		{"global flag without its value", []string{"--db"}, []string{"flag --db needs a value"}},
		{"malformed flag value", []string{"verify", "--pack", "p.yaml", "--batch-size", "many"}, []string{`verify: invalid value "many" for flag --batch-size`}},
		{"malformed float flag", []string{"cel", "eval", "--latency", "slow", "true"}, []string{`cel eval: invalid value "slow" for flag --latency`}},
		{"required flag missing", []string{"frontier"}, []string{"frontier: --pack is required (see assay frontier --help)"}},
		{"required flags missing", []string{"cel", "eval", "true"}, []string{"cel eval: --pack, --task, --trace are required"}},
		{"unknown command", []string{"bogus"}, []string{`unknown command "bogus"`, "commands: version, pack, plugins, scorers, doctor, verify, frontier, rescore, compare, score, cel, state, eval, task-eval"}},
		{"misspelt command", []string{"verifi"}, []string{`unknown command "verifi"; did you mean verify?`}},
		{"unknown subcommand", []string{"pack", "check", "p.yaml"}, []string{`pack: unknown command "check"`, "commands: validate"}},
		{"help for an unknown command", []string{"help", "bogus"}, []string{`unknown command "bogus"`}},
		{"arguments to a command that takes none", []string{"frontier", "--pack", fx + "pack.yaml", "extra"}, []string{`frontier: takes no arguments, got ["extra"]`}},
		{"arguments to version", []string{"version", "now"}, []string{"version: takes no arguments"}},
		{"arguments to verify", []string{"verify", "--pack", fx + "pack.yaml", "--turns", "t.ndjson", "extra"}, []string{"verify: takes no arguments"}},
		{"bad --format", []string{"pack", "validate", "--format", "yaml", "p.yaml"}, []string{"--format: want text, json, github or sarif"}},
		{"register without binaries", []string{"plugins", "register"}, []string{"name at least one plugin binary"}},
		{"register a wrongly named binary", []string{"--plugin-dir", t.TempDir(), "plugins", "register", notAPlugin},
			[]string{"my-scorer: a scorer plugin binary is named assay-scorer-<id>"}},
		{"pack validate without packs", []string{"pack", "validate"}, []string{"name at least one PACK file"}},
		{"cel eval without an expression", []string{"cel", "eval", "--pack", fx + "pack.yaml", "--task", "t", "--trace", "t.ndjson"}, []string{"want exactly one EXPR"}},
		{"eval with two files", []string{"eval", "a.json", "b.json"}, []string{"want at most one FILE.json"}},
		{"state check without files", []string{"state", "check"}, []string{"want at least one FILE"}},
		{"conformance without a binary", []string{"plugins", "conformance"}, []string{"name one plugin binary"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(context.Background(), tt.args, &out, &errOut)
			if code != ExitInvalid {
				t.Errorf("Main(%q) = exit %d, want %d\nstderr: %s", tt.args, code, ExitInvalid, errOut.String())
			}
			if out.Len() != 0 {
				t.Errorf("Main(%q) printed %q on stdout, want nothing", tt.args, out.String())
			}
			if lines := strings.Count(strings.TrimSuffix(errOut.String(), "\n"), "\n") + 1; lines != 1 {
				t.Errorf("Main(%q) printed %d lines on stderr, want one:\n%s", tt.args, lines, errOut.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("Main(%q) stderr = %q, want it to contain %q", tt.args, errOut.String(), w)
				}
			}
		})
	}
}

// TestHelpIsNotAnError: asking for help, or naming a command group without
// a command, shows the help and exits 0.
func TestHelpIsNotAnError(t *testing.T) {
	tests := []struct {
		args []string
		want string // a substring of stdout
	}{
		{nil, "COMMANDS:"},
		{[]string{"help"}, "COMMANDS:"},
		{[]string{"--help"}, "COMMANDS:"},
		{[]string{"help", "verify"}, "assay verify --pack P"},
		{[]string{"help", "pack", "validate"}, "assay pack validate [--format text|json] PACK..."},
		{[]string{"verify", "-h"}, "assay verify --pack P"},
		{[]string{"pack"}, "validate"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		if code := Main(context.Background(), tt.args, &out, &errOut); code != ExitOK || !strings.Contains(out.String(), tt.want) {
			t.Errorf("Main(%q) = exit %d, stdout %q, stderr %q; want exit 0 and %q", tt.args, code, out.String(), errOut.String(), tt.want)
		}
	}
}
