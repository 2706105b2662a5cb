package builtin

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/sdk"
)

func TestScorers(t *testing.T) {
	t.Parallel()
	var ids []sdk.ID
	for _, s := range Scorers() {
		ids = append(ids, s.Describe().ID)
	}
	want := []sdk.ID{"task_state", "memory_grounding", "tool_sequence", "stigmergic", "answer_keywords", "composite"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("Scorers() ids mismatch (-want +got):\n%s", diff)
	}
	if Scorers()[0] == nil {
		t.Errorf("Scorers()[0] = nil")
	}
}

// TestKPIKeysAgree checks that a KPI key declared by more than one built-in
// scorer has the same value type and failure tag everywhere, since the pack
// loader and composite treat a key as one thing.
func TestKPIKeysAgree(t *testing.T) {
	t.Parallel()
	seen := map[string]sdk.KPI{}
	owner := map[string]sdk.ID{}
	for _, s := range Scorers() {
		d := s.Describe()
		for _, k := range d.KPIs {
			prev, ok := seen[k.Key]
			if ok && (prev.ValueType != k.ValueType || prev.FailureTag != k.FailureTag) {
				t.Errorf("KPI %s: %s declares (%s, %q), %s declares (%s, %q)",
					k.Key, owner[k.Key], prev.ValueType, prev.FailureTag, d.ID, k.ValueType, k.FailureTag)
			}
			seen[k.Key], owner[k.Key] = k, d.ID
		}
	}
	if len(seen) != 19 {
		t.Errorf("built-in scorers declare %d distinct KPI keys, want 19", len(seen))
	}
}

// TestNoHostImports fails when a plugin or SDK package reaches host/: the
// import direction is plugins -> sdk -> pkg.
func TestNoHostImports(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list dependencies")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/assay-eval/assay/plugins/...", "github.com/assay-eval/assay/sdk/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/assay-eval/assay/host") {
			t.Errorf("plugins or sdk depend on %s", dep)
		}
	}
}
