package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// govPack is the example pack with a governance block and a kill criterion
// that fires on any run that failed its gates.
func govPack(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../../packs/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, []byte(`governance: {suspect_rate: 0.2, min_reviews: 1}
kill_criteria:
  - name: any_failed_gate
    expr: history.exists(r, !r.gates_passed)
    message: a run failed its gates
`)...)
	path := filepath.Join(t.TempDir(), "pack.yaml")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func jsonKeys(t *testing.T, what, out string) []string {
	t.Helper()
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) == 0 {
		t.Fatalf("%s --format json = %q (%v), want a non-empty list", what, out, err)
	}
	var keys []string
	for k := range list[0] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestGovernanceCommands covers items 1-5 through the command line: verify
// fires a kill criterion and lists it; review sample, record and stats; a
// suspect scorer shows in verify and summary.json; governance check and
// clear; promote refused with every red interlock listed; the JSON shapes.
func TestGovernanceCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	pack := govPack(t)
	run := func(args ...string) (int, string, string) {
		return evalRun(t, append([]string{"--db", db}, args...)...)
	}
	code, out, errOut := run("verify", "--pack", pack, "--in-process", "--run", "../../examples/runs/candidate-a", "--run", "../../examples/runs/candidate-b")
	if code != 1 {
		t.Fatalf("verify = %d\n%s\n%s", code, out, errOut)
	}
	wantLines(t, "verify", out, "KILL CRITERION any_failed_gate FIRED now (candidate candidate-b")

	code, out, _ = run("governance", "check", "--pack", pack, "--format", "json")
	if code != 1 {
		t.Errorf("governance check with a fired criterion = %d, want 1", code)
	}
	if got := strings.Join(jsonKeys(t, "governance check", out), ","); got != "candidate,fired,fired_at,message,name,run_id" {
		t.Errorf("governance check keys = %s", got)
	}

	code, out, errOut = run("review", "sample", "--pack", pack, "--candidate", "candidate-a", "--n", "2", "--seed", "4", "--format", "json")
	if code != 0 {
		t.Fatalf("review sample = %d: %s", code, errOut)
	}
	if got := strings.Join(jsonKeys(t, "review sample", out), ","); got != "candidate,label,scorer,turn_id,turn_score" {
		t.Errorf("review sample keys = %s", got)
	}
	var picked []struct {
		TurnID int64  `json:"turn_id"`
		Scorer string `json:"scorer"`
	}
	_ = json.Unmarshal([]byte(out), &picked)
	_, again, _ := run("review", "sample", "--pack", pack, "--candidate", "candidate-a", "--n", "2", "--seed", "4", "--format", "json")
	if again != out {
		t.Errorf("review sample with the same seed differs:\n%s\n%s", out, again)
	}
	id := itoa(picked[0].TurnID)
	if code, _, errOut := run("review", "record", id, "--reviewer", "ana", "--override", "--correct", "fail", "--reason", "no task created"); code != 0 {
		t.Fatalf("review record = %d: %s", code, errOut)
	}
	_, out, _ = run("review", "stats", "--pack", pack, "--format", "json")
	if got := strings.Join(jsonKeys(t, "review stats", out), ","); got != "ci95,override_rate,overrides,reason,reviews,scorer,sha256,status,version" {
		t.Errorf("review stats keys = %s", got)
	}
	wantLines(t, "review stats", out, `"status": "suspect"`, `"scorer": "`+picked[0].Scorer+`"`)

	_, out, _ = run("frontier", "--pack", pack)
	wantLines(t, "frontier", out, "SUSPECT SCORER: "+picked[0].Scorer)
	_, out, _ = run("doctor")
	wantLines(t, "doctor", out, "review "+picked[0].Scorer, "review thresholds here are the defaults")

	outDir := t.TempDir()
	_, out, _ = run("verify", "--pack", pack, "--in-process", "--run", "../../examples/runs/candidate-a", "--out", outDir)
	wantLines(t, "verify after an override", out, "scorer "+picked[0].Scorer, "is suspect: review: override rate 1.000")
	summary, _ := os.ReadFile(filepath.Join(outDir, "summary.json"))
	wantLines(t, "summary.json", string(summary), `"status": "suspect"`, `"kill_criteria"`)

	code, _, errOut = run("promote", "--pack", pack, "--candidate", "candidate-a", "--approved-by", "ana")
	if code != 1 {
		t.Errorf("promote with red interlocks = %d, want 1", code)
	}
	wantLines(t, "promote", errOut, "shadow_runs:", "kill_criteria: fired and not cleared: any_failed_gate", "scorers: flagged scorers: "+picked[0].Scorer)
	if _, out, _ := run("promotions", "list", "--format", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("promotions list after a refusal = %s, want []", out)
	}

	if code, _, errOut := run("governance", "clear", "any_failed_gate", "--pack", pack, "--by", "ana", "--reason", "known outage"); code != 0 {
		t.Fatalf("governance clear = %d: %s", code, errOut)
	}
	if code, _, _ := run("governance", "clear", "any_failed_gate", "--pack", pack, "--by", "ana", "--reason", "again"); code != 2 {
		t.Errorf("governance clear of a cleared criterion = %d, want 2", code)
	}
}

// TestGovernanceUsageErrors covers item 5: every refusal of review record
// and promote that is a usage error exits 2 naming what is missing.
func TestGovernanceUsageErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	pack := govPack(t)
	if code, out, errOut := evalRun(t, "--db", db, "verify", "--pack", pack, "--in-process", "--run", "../../examples/runs/candidate-a"); code > 1 {
		t.Fatalf("verify = %d\n%s\n%s", code, out, errOut)
	}
	tests := map[string]struct {
		args []string
		want string
	}{
		"override without correct": {[]string{"review", "record", "1", "--reviewer", "ana", "--override", "--reason", "x"}, "--correct"},
		"no reviewer":              {[]string{"review", "record", "1", "--agree", "--reason", "x"}, "--reviewer is required"},
		"blank reviewer":           {[]string{"review", "record", "1", "--reviewer", " ", "--agree", "--reason", "x"}, "reviewer is blank"},
		"no reason":                {[]string{"review", "record", "1", "--reviewer", "ana", "--agree"}, "--reason is required"},
		"blank reason":             {[]string{"review", "record", "1", "--reviewer", "ana", "--agree", "--reason", " "}, "reason is blank"},
		"unknown turn":             {[]string{"review", "record", "9999", "--reviewer", "ana", "--agree", "--reason", "x"}, "no stored turn has this id"},
		"no turn id":               {[]string{"review", "record", "--reviewer", "ana", "--agree", "--reason", "x"}, "TURN_ID"},
		"agree and override":       {[]string{"review", "record", "1", "--reviewer", "ana", "--agree", "--override", "--correct", "pass", "--reason", "x"}, "exactly one of --agree and --override"},
		"bad correct":              {[]string{"review", "record", "1", "--reviewer", "ana", "--override", "--correct", "maybe", "--reason", "x"}, "pass or fail"},
		"no approver":              {[]string{"promote", "--pack", pack, "--candidate", "candidate-a"}, "--approved-by is required"},
		"blank approver":           {[]string{"promote", "--pack", pack, "--candidate", "candidate-a", "--approved-by", ""}, "approver is blank"},
		"no force":                 {[]string{"promote", "--pack", pack, "--candidate", "candidate-a", "--approved-by", "ana", "--force"}, "force"},
		"clear without by":         {[]string{"governance", "clear", "x", "--pack", pack, "--reason", "x"}, "--by is required"},
	}
	for name, tc := range tests {
		code, _, errOut := evalRun(t, append([]string{"--db", db}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: assay %v = %d, %q; want 2 naming %q", name, tc.args, code, errOut, tc.want)
		}
	}
}

func itoa(n int64) string { return evalItoa(n) }
