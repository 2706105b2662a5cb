package conformance

import (
	"context"
	"fmt"
	"io"

	"github.com/assay-eval/assay/sdk"
)

// CheckDirectCancellation is the check CheckScorer adds: Score called
// directly (no transport) with a cancelled context returns promptly.
const CheckDirectCancellation = "direct_cancellation"

// CheckScorer serves s in-process over real gRPC and runs every check
// against it (with no cases, the generic Cases of its description), then
// calls s.Score directly with a cancelled context, which must return
// promptly. The error is set only when s cannot be served.
func CheckScorer(ctx context.Context, s sdk.Scorer, cases ...*sdk.Case) (Report, error) {
	c, stop, err := Serve(s)
	if err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	defer stop()
	rep := Check(ctx, c, cases...)
	if len(cases) == 0 {
		cases = Cases(s.Describe())
	}
	return append(rep, newResult(CheckDirectCancellation, directCancelProblems(ctx, s, cases))), nil
}

func directCancelProblems(ctx context.Context, s sdk.Scorer, cases []*sdk.Case) []string {
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	var p []string
	for _, cs := range cases {
		var err error
		if msg := returnsPromptly(func() { _, err = s.Score(ctx, cs) }); msg != "" {
			p = append(p, fmt.Sprintf("Score(cancelled context, case %q) %s", cs.ID, msg))
		} else if err == nil {
			p = append(p, fmt.Sprintf("Score(cancelled context, case %q) returned a result instead of the context's error", cs.ID))
		}
	}
	return p
}

// CheckBinary launches the plugin binary at path (its log to stderr, nil to
// discard) and runs every check against it. The error is set only when the
// binary cannot be launched. A plugin that started only with AutoMTLS gets
// a finding (CheckTransport), which does not fail the report.
func CheckBinary(ctx context.Context, path string, stderr io.Writer, cases ...*sdk.Case) (Report, error) {
	c, stop, tls, err := launch(path, stderr)
	if err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	defer stop()
	rep := Check(ctx, c, cases...)
	if tls {
		rep = append(rep, Result{Name: CheckTransport, Findings: []string{tlsFinding}})
	}
	return rep, nil
}

// CheckTransport is the check CheckBinary adds when the plugin started only
// with AutoMTLS: a finding, not a problem (docs/plugins.md, "The connection").
const CheckTransport = "plaintext_transport"

const tlsFinding = "requires AutoMTLS: works, but costs CPU per byte; serve plaintext when PLUGIN_CLIENT_CERT is absent"
