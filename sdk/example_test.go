package sdk_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/assay-eval/assay/sdk"
)

// politeness checks that the answer says thank you.
type politeness struct{}

func (politeness) Describe() sdk.Description {
	return sdk.Description{
		ID:      "politeness",
		Version: "1.0.0",
		KPIs:    []sdk.KPI{{Key: "says_thanks", ValueType: sdk.Bool, FailureTag: "ungrounded_answer"}},
		Needs:   []sdk.Need{sdk.NeedAnswer},
	}
}

func (politeness) Score(ctx context.Context, c *sdk.Case) (*sdk.Result, error) {
	ok := strings.Contains(strings.ToLower(c.Turn.Answer), "thank")
	check := sdk.Check{KPI: "says_thanks", Passed: ok, Detail: fmt.Sprintf("thanks found: %v", ok)}
	if ok {
		check.Score = 1
	} else {
		check.FailureTag = "ungrounded_answer"
	}
	return &sdk.Result{Score: check.Score, Checks: []sdk.Check{check}}, nil
}

// A complete plugin is the type above and a main of one line:
//
//	func main() { sdk.Serve(politeness{}) }
//
// Here the scorer scores two cases directly, as Serve does for each case of
// a batch.
func Example() {
	cases := []*sdk.Case{
		{ID: "a", Turn: sdk.Turn{Answer: "Done, thank you!"}},
		{ID: "b", Turn: sdk.Turn{Answer: "Done."}},
	}
	for _, c := range cases {
		r, err := politeness{}.Score(context.Background(), c)
		if err != nil {
			fmt.Printf("%s: %v\n", c.ID, err)
			continue
		}
		fmt.Printf("%s: %.1f %s\n", c.ID, r.Score, r.Checks[0].Detail)
	}
	// Output:
	// a: 1.0 thanks found: true
	// b: 0.0 thanks found: false
}
