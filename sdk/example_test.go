package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/grade"
)

// politeness checks that the answer says thank you when the task asks for
// it (says_thanks: true).
func politeness() sdk.Scorer {
	describe := func() sdk.Description {
		return sdk.Description{
			ID:      "politeness",
			Version: "1.0.0",
			KPIs:    []sdk.KPI{{Key: "says_thanks", ValueType: sdk.Bool, FailureTag: "impolite_answer"}},
			Needs:   []sdk.Need{sdk.NeedAnswer},
		}
	}
	return grade.NewScorer(describe, func(s *grade.Sheet, c *sdk.Case) {
		if want, ok := s.Bool("says_thanks"); ok {
			thanked := strings.Contains(strings.ToLower(c.Turn.Answer), "thank")
			s.Verdict("says_thanks", thanked == want, fmt.Sprintf("thanks found: %v", thanked))
		}
	})
}

// A complete plugin is the scorer above and a main of one line:
//
//	func main() { plugin.Serve(politeness()) }
//
// The grade.Sheet averages the checks into the score and copies the failure
// tag of each failed check into Result.FailureTags. Here the scorer scores
// two cases directly, as Serve does for each case of a batch.
func Example() {
	task := sdk.Task{Label: "close_ticket", KPIs: map[string]json.RawMessage{"says_thanks": json.RawMessage(`true`)}}
	cases := []*sdk.Case{
		{ID: "a", Task: task, Turn: sdk.Turn{Answer: "Done, thank you!"}},
		{ID: "b", Task: task, Turn: sdk.Turn{Answer: "Done."}},
	}
	for _, c := range cases {
		r, err := politeness().Score(context.Background(), c)
		if err != nil {
			fmt.Printf("%s: %v\n", c.ID, err)
			continue
		}
		fmt.Printf("%s: %.1f %s %v\n", c.ID, r.Score, r.Checks[0].Detail, r.FailureTags)
	}
	// Output:
	// a: 1.0 thanks found: true []
	// b: 0.0 thanks found: false [impolite_answer]
}
