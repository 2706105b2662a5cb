package testscorer

import (
	"context"
	"strings"

	"github.com/assay-eval/assay/sdk"
)

// Breaches are the task labels Breach answers with a contract-breaking
// result, each with the words the host's refusal must contain.
var Breaches = map[string]string{
	"undeclared_kpi": `check 0 is for KPI "secret_kpi", which scorer`,
	"passed_low":     "check 0 (label_seen) has passed true with score 0",
	"failed_full":    "check 0 (label_seen) has passed false with score 1",
	"many_checks":    "257 checks, more than the 256",
	"long_detail":    "a detail of 501 characters, more than 500",
	"long_evidence":  "evidence 1 has 501 characters, more than 500",
	"bad_tag":        `failure tag "bad\x1b[31m\x00" is not of [a-z0-9_]`,
	"bad_check_tag":  `has failure tag "Tag-X", not of [a-z0-9_]`,
}

// BreachNeeds are the needs of the scorer that answers with Breach: the
// upstream results, whose check KPI keys a result may repeat.
var BreachNeeds = []sdk.Need{sdk.NeedTrace, sdk.NeedUpstream}

// Breach returns, for a label of Breaches, a result that breaks the
// contract that way; nil (the default result) for any other label.
func Breach(_ context.Context, c *sdk.Case) *sdk.Result {
	ok := sdk.Check{KPI: "label_seen", Score: 1, Passed: true, Detail: "seen"}
	r := &sdk.Result{Score: 1, Checks: []sdk.Check{ok}}
	switch c.Task.Label {
	case "undeclared_kpi", "upstream_kpi":
		r.Checks[0].KPI = "secret_kpi"
	case "passed_low":
		r.Checks[0].Score = 0
	case "failed_full":
		r.Checks[0].Passed = false
	case "many_checks":
		for range 256 {
			r.Checks = append(r.Checks, ok)
		}
	case "long_detail":
		r.Checks[0].Detail = strings.Repeat("d", 501)
	case "long_evidence":
		r.Checks[0].Evidence = []string{"fine", strings.Repeat("é", 501)}
	case "bad_tag":
		r.FailureTags = []string{"bad\x1b[31m\x00"}
	case "bad_check_tag":
		r.Checks[0] = sdk.Check{KPI: "label_seen", Score: 0, Detail: "missed", FailureTag: "Tag-X"}
	default:
		return nil
	}
	return r
}
