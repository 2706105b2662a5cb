package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackValidateForCI (issue 20 item 3): --format github prints one
// annotation per diagnostic at its line; --format sarif one result per
// diagnostic and one rule per code. Both keep exit 2 for an invalid pack.
func TestPackValidateForCI(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("company:\n  id: acme\n  colour: blue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(format string) string {
		var stdout, stderr bytes.Buffer
		args := []string{"pack", "validate", "--format", format, bad, "../../packs/example.yaml"}
		if code := Main(context.Background(), args, &stdout, &stderr); code != ExitInvalid {
			t.Fatalf("assay %v = exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, ExitInvalid, &stdout, &stderr)
		}
		return stdout.String()
	}
	lines := strings.Split(strings.TrimSuffix(run("github"), "\n"), "\n")
	if len(lines) != 4 {
		t.Errorf("github: %d lines, want 4 (one per problem):\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if want := "::error file=" + bad + ",line=3,col=3,title=pack.unknown_key::company: unknown key \"colour\""; !strings.Contains(strings.Join(lines, "\n"), want) {
		t.Errorf("github: no line %q in:\n%s", want, strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "::error file=") {
			t.Errorf("github: line %q is not an annotation", l)
		}
	}

	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID string } `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID string `json:"ruleId"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(run("sarif")), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Results) != 4 {
		t.Fatalf("sarif: version %q, %d runs, want 2.1.0 with 1 run of 4 results: %+v", log.Version, len(log.Runs), log)
	}
	codes := map[string]bool{}
	for _, r := range log.Runs[0].Results {
		codes[r.RuleID] = true
	}
	var rules []string
	for _, r := range log.Runs[0].Tool.Driver.Rules {
		rules = append(rules, r.ID)
		if !codes[r.ID] {
			t.Errorf("sarif: rule %s has no result", r.ID)
		}
	}
	if len(rules) != len(codes) {
		t.Errorf("sarif: rules %v for result codes %v: want one rule per code", rules, codes)
	}
}
