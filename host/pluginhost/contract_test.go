package pluginhost_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/host/pluginhost/testdata/plugins/testscorer"
	"github.com/assay-eval/assay/pkg/scorer"
)

// TestContractChecks covers issue 14 item 4: each kind of result that breaks
// the contract is a scorer error naming the reason, from a plugin and from
// the same scorer in-process; a result within it is scored.
func TestContractChecks(t *testing.T) {
	t.Parallel()
	labels := []string{"fine", "upstream_kpi"}
	for l := range testscorer.Breaches {
		labels = append(labels, l)
	}
	cases := labelled(labels...)
	// A check for a KPI key the scorer does not declare passes when an
	// upstream result it was given has a check of that key.
	cases[1].Upstream = []scorer.Upstream{{Scorer: "other", Result: scorer.Result{Score: 1,
		Checks: []scorer.Check{{KPI: "secret_kpi", Score: 1, Passed: true}}}}}
	hosts := map[string]*pluginhost.Host{
		"plugin":     pluginhost.New(manifest()),
		"in-process": pluginhost.New(manifest(), pluginhost.WithInProcess(testscorer.Scorer{ID: "test_bad", Hook: testscorer.Breach, Needs: testscorer.BreachNeeds})),
	}
	for name, h := range hosts {
		t.Run(name, func(t *testing.T) {
			defer h.Close()
			outs := h.Score(context.Background(), "test_bad", cases)
			for i, l := range labels {
				want, bad := testscorer.Breaches[l]
				err := outs[i].Err
				switch {
				case !bad && err != nil:
					t.Errorf("Score(%s) error = %v, want it scored", l, err)
				case bad && (!errors.Is(err, pluginhost.ErrContract) || !strings.Contains(err.Error(), want)):
					t.Errorf("Score(%s) error = %v, want ErrContract saying %q", l, err, want)
				}
			}
		})
	}
}
