package answerkeywords

import (
	"fmt"
	"unicode/utf8"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/grade"
)

// KPI keys.
const (
	KeyAnswerKeywords  = "answer_keywords"
	KeyMinAnswerLength = "min_answer_length"
)

// description is built fresh for every caller, so nobody can change another's.
func description() sdk.Description {
	return sdk.Description{
		ID:      "answer_keywords",
		Version: "1.0.0",
		KPIs: []sdk.KPI{
			{Key: KeyAnswerKeywords, ValueType: sdk.StringList,
				Description: "fraction of the listed keywords found in the answer (case-insensitive substring); no failure tag"},
			{Key: KeyMinAnswerLength, ValueType: sdk.Integer,
				Description: "1 when the answer has at least n runes, else runes/n; no failure tag"},
		},
		Needs: []sdk.Need{sdk.NeedAnswer},
	}
}

// New returns the answer_keywords scorer.
func New() sdk.Scorer { return grade.NewScorer(description, checkCase) }

// checkCase records the checks of case c on s.
func checkCase(s *grade.Sheet, c *sdk.Case) {
	answer := c.Turn.Answer
	if kws, ok := s.StringList(KeyAnswerKeywords); ok {
		s.KeywordCheck(KeyAnswerKeywords, "the answer", answer, kws)
	}
	if n, ok := s.Integer(KeyMinAnswerLength); ok {
		minLength(s, KeyMinAnswerLength, answer, n)
	}
}

// minLength records check k: 1 when text has at least n runes, else runes/n.
func minLength(s *grade.Sheet, k, text string, n int) {
	got := utf8.RuneCountInString(text)
	switch {
	case n <= 0:
		s.Pass(k, fmt.Sprintf("the answer has %d runes; no minimum (min_answer_length %d)", got, n))
	case got >= n:
		s.Pass(k, fmt.Sprintf("the answer has %d runes, want >= %d", got, n))
	default:
		s.Score(k, float64(got)/float64(n), fmt.Sprintf("the answer has %d runes, want >= %d", got, n))
	}
}
