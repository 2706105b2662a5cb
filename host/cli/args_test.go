package cli

import (
	"strings"

	"github.com/urfave/cli/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInterspersed(t *testing.T) {
	app := (&app{}).cliApp()
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"flags already first", []string{"eval", "--format", "json", "f.json"}, []string{"eval", "--format", "json", "f.json"}},
		{"flag after the argument", []string{"eval", "f.json", "--format", "json"}, []string{"eval", "--format", "json", "f.json"}},
		{"flag=value", []string{"eval", "f.json", "--format=json"}, []string{"eval", "--format=json", "f.json"}},
		{"bool flag takes no value", []string{"verify", "--pack", "p", "--in-process", "extra"}, []string{"verify", "--pack", "p", "--in-process", "extra"}},
		{"global flags and subcommand", []string{"--db", "x.db", "pack", "validate", "a.yaml", "--format", "json", "b.yaml"},
			[]string{"--db", "x.db", "pack", "validate", "--format", "json", "a.yaml", "b.yaml"}},
		{"double dash ends flags", []string{"cel", "eval", "--pack", "p", "--", "-1 < 0"}, []string{"cel", "eval", "--pack", "p", "--", "-1 < 0"}},
		{"unknown command untouched", []string{"nope", "x", "--y"}, []string{"nope", "x", "--y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, interspersed(app, tt.in)); diff != "" {
				t.Errorf("interspersed(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// Every command, subcommands included, shows an example in its --help.
func TestEveryCommandHasAnExample(t *testing.T) {
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := prefix + c.Name
			if len(c.Subcommands) > 0 {
				walk(name+" ", c.Subcommands)
			}
			if !strings.Contains(c.UsageText+c.Description, "Example") {
				t.Errorf("assay %s --help has no example", name)
			}
		}
	}
	walk("", (&app{}).cliApp().Commands)
}
