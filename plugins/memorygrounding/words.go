package memorygrounding

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// minWordRunes is the shortest content word.
const minWordRunes = 4

// contentWords calls yield for each content word of text: a lowercased run of
// letters and digits of at least minWordRunes runes that is not a stop-word.
// A word may be yielded more than once. ASCII text takes a fast path; the
// result is the same as for the general one.
func contentWords(text string, yield func(string)) {
	start, ascii := -1, true
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := text[start:end]
		start = -1
		n := len(w)
		if !ascii {
			n = utf8.RuneCountInString(w)
		}
		if n < minWordRunes {
			return
		}
		w = strings.ToLower(w)
		if len(w) <= maxStopWordLen {
			if _, stop := stopWords[w]; stop {
				return
			}
		}
		yield(w)
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if asciiWord[c] {
				if start < 0 {
					start, ascii = i, true
				}
			} else {
				flush(i)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			ascii = false
		} else {
			flush(i)
		}
		i += size
	}
	flush(len(text))
}

// asciiWord marks the ASCII letters and digits.
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return t
}()

// distinctWords is the set of content words of text, in first-seen order.
func distinctWords(text string) []string {
	seen := map[string]struct{}{}
	var out []string
	contentWords(text, func(w string) {
		if _, ok := seen[w]; !ok {
			seen[w] = struct{}{}
			out = append(out, w)
		}
	})
	return out
}

// stopWords are English function words of four or more letters: sharing them
// says nothing about where an answer came from.
var stopWords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`
		about above across after afterwards again against almost alone along already also
		although always among amongst another anyhow anyone anything anyway anywhere
		around because become becomes becoming been before beforehand behind being below
		beside besides between beyond both cannot could couldn didn doesn does doing done
		down during each either else elsewhere enough even ever every everyone everything
		everywhere except few further hadn hasn have haven having hence here hereafter
		hereby herein hers herself himself however into isn itself just least less like
		made make many might mine more moreover most mostly much must myself neither
		never nevertheless next nobody none noone nothing now nowhere often once only
		onto other others otherwise ours ourselves over own perhaps please quite rather
		really same seem seemed seeming seems shall shan should shouldn since some
		somehow someone something sometime sometimes somewhere still such than that
		their theirs them themselves then thence there thereafter thereby therefore
		therein thereupon these they this those though through throughout thru thus
		together too toward towards under unless until upon very via wasn were weren
		what whatever when whence whenever where whereafter whereas whereby wherein
		whereupon wherever whether which while whither whoever whole whom whose why
		will with within without won wouldn would yet your yours yourself yourselves
		from able came come comes went goes going gone want wants well also just back
		been get gets got here lot lots okay sure thing things yeah yes
	`) {
		if len(w) >= minWordRunes {
			m[w] = struct{}{}
		}
	}
	return m
}()

// maxStopWordLen is the length in bytes of the longest stop-word: a longer
// word needs no look-up.
var maxStopWordLen = func() int {
	n := 0
	for w := range stopWords {
		n = max(n, len(w))
	}
	return n
}()
