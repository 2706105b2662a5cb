package grade

import (
	"fmt"
	"strings"
)

// Keywords splits keywords into those found in text and those missing, by
// case-insensitive substring match.
func Keywords(text string, keywords []string) (found, missing []string) {
	lower := strings.ToLower(text)
	for _, kw := range keywords {
		if strings.Contains(lower, strings.ToLower(kw)) {
			found = append(found, kw)
		} else {
			missing = append(missing, kw)
		}
	}
	return found, missing
}

// KeywordCheck records check k: the fraction of keywords found in text,
// which is described as where ("the answer", "task 'X' title and
// specification"). An empty list passes.
func (s *Sheet) KeywordCheck(k, where, text string, keywords []string, evidence ...string) {
	score, detail := KeywordScore(where, text, keywords)
	s.Score(k, score, detail, evidence...)
}

// KeywordScore is the fraction of keywords found in text and a detail that
// names the missing ones. An empty list scores 1.
func KeywordScore(where, text string, keywords []string) (float64, string) {
	if len(keywords) == 0 {
		return 1, "no keywords listed"
	}
	found, missing := Keywords(text, keywords)
	score := float64(len(found)) / float64(len(keywords))
	if len(missing) == 0 {
		return score, fmt.Sprintf("found every keyword in %s: %s", where, strings.Join(keywords, ", "))
	}
	return score, fmt.Sprintf("%d of %d keywords found in %s; missing keywords: %s",
		len(found), len(keywords), where, strings.Join(missing, ", "))
}

// Count is n followed by the noun's singular or plural form: "1 note", "2 notes".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
