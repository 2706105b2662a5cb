package verdict_test

import (
	"fmt"

	"github.com/assay-eval/assay/host/verdict"
)

func ExampleEvaluate() {
	ev := verdict.Evaluate(verdict.Input{
		TaskID:  "checkout",
		Metrics: map[string]float64{verdict.Correctness: 0.95, verdict.Security: 0.9},
		Tests:   &verdict.Tests{Passed: 10, Failed: 3},
	})
	fmt.Println(ev.Verdict, ev.Success)
	for _, r := range ev.Recommendations {
		fmt.Println(r)
	}
	// Output:
	// FAIL false
	// Fix the 3 failing tests.
}

func ExampleRepair_Run() {
	r := verdict.NewRepair(verdict.KindTrace, map[string]any{"runId": "r1"}, 3)
	res, err := r.Run(func(content any, res verdict.ArtifactResult) (any, error) {
		return map[string]any{"runId": "r1", "spans": []any{map[string]any{"name": "checkout", "ms": 120}}}, nil
	})
	fmt.Println(res.Valid, err, r.History())
	// Output:
	// true <nil> [INVALID REPAIR RE_EVALUATE VALID]
}
