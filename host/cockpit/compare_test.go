package cockpit

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/store"
)

func fp(v float64) *float64 { return &v }

// TestCompareTasks (issue 21 item 3): two candidates' turns are paired by
// task; the delta is B − A where both scored, and the mean is over those.
func TestCompareTasks(t *testing.T) {
	a := []store.TurnRow{{Label: "x", TurnScore: fp(.5)}, {Label: "y", TurnScore: fp(1)}, {Label: "only_a", TurnScore: fp(.2)}}
	b := []store.TurnRow{{Label: "y", TurnScore: fp(.75)}, {Label: "x", TurnScore: fp(1)}, {Label: "unscored"}}
	rows, mean := compareTasks(a, b)
	want := []deltaRow{
		{Label: "only_a", A: fp(.2)},
		{Label: "unscored"},
		{Label: "x", A: fp(.5), B: fp(1), Delta: fp(.5)},
		{Label: "y", A: fp(1), B: fp(.75), Delta: fp(-.25)},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("compareTasks() rows (-want +got):\n%s", diff)
	}
	if mean == nil || *mean != .125 {
		t.Errorf("compareTasks() mean = %v, want 0.125", mean)
	}
	if _, mean := compareTasks(nil, b); mean != nil {
		t.Errorf("compareTasks(nil, b) mean = %v, want none (no task scored by both)", *mean)
	}
}
