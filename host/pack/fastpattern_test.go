package pack

import (
	"regexp"
	"testing"
)

// classPatterns are patterns near the edge of what newClassPattern takes;
// true marks the ones it must take.
var classPatterns = map[string]bool{
	`^[A-Za-z0-9][A-Za-z0-9_.-]*$`: true,
	`^[A-Za-z_][A-Za-z0-9_.-]*$`:   true,
	`^[a-z][a-z0-9_]*$`:            true,
	`^a[b-d]*$`:                    true,
	`^[a][\-.]*$`:                  true,
	`^https?://`:                   false,
	`^[a-z][a-z]+$`:                false,
	`^[a-z]*$`:                     false,
	`[a-z][a-z]*`:                  false,
	`^[a-z][a-z]*`:                 false,
	`^[^a-z][a-z]*$`:               false,
	`^[a-zé][a-z]*$`:               false,
	`^(?i)[a-k][a-z]*$`:            false,
	`^[a-z].*$`:                    false,
	`^[a-z][a-z]*$|^x$`:            false,
	`(?m)^[a-z][a-z]*$`:            false,
	`^[a-z][a-z]*?$`:               true,
	`^\d[\w]*$`:                    true,
	`^[[:alpha:]][[:digit:]]*$`:    true,
}

// classInputs probe the patterns: ASCII, non-ASCII, invalid UTF-8, line
// breaks.
var classInputs = []string{
	"", "a", "A", "z", "_", "0", "9", "-", ".", "ab", "a0", "a_b", "a.b", "a-b", "abc-", "0abc", "_x", "-x", ".x",
	"aB", "Ab", "a b", " a", "a ", "a\n", "\na", "a\nb", "é", "aé", "\xff", "a\xff", "a\x00", "K", "k", "\u212a", "a\u212a",
	"bbb", "a-.-.", "t0000001", "finalized", "few_tools", "x9_.-", "https://x", "ab\r",
}

// TestClassPatternSame checks that a class pattern matches exactly what its
// regexp matches, and that the embedded schema's label and name patterns
// are class patterns (so that it is in use).
func TestClassPatternSame(t *testing.T) {
	t.Parallel()
	for src, want := range classPatterns {
		re := regexp.MustCompile(src)
		p := newClassPattern(re)
		if (p != nil) != want {
			t.Errorf("newClassPattern(%q) = %v, want a class pattern: %v", src, p, want)
		}
		if p == nil {
			continue
		}
		for _, s := range classInputs {
			if got, want := p.MatchString(s), re.MatchString(s); got != want {
				t.Errorf("class pattern %q matches %q: %v, the regexp: %v", src, s, got, want)
			}
		}
		for c := range 256 {
			for _, s := range []string{string(rune(c)), string([]byte{byte(c)}), "a" + string([]byte{byte(c)}), string([]byte{byte(c)}) + "a"} {
				if got, want := p.MatchString(s), re.MatchString(s); got != want {
					t.Errorf("class pattern %q matches %q: %v, the regexp: %v", src, s, got, want)
				}
			}
		}
	}
	classes := 0
	var walk func(f *fastSchema, seen map[*fastSchema]bool)
	walk = func(f *fastSchema, seen map[*fastSchema]bool) {
		if f == nil || seen[f] {
			return
		}
		seen[f] = true
		if f.class != nil {
			classes++
		}
		for _, p := range f.props {
			walk(p, seen)
		}
		walk(f.items, seen)
		walk(f.addl, seen)
		walk(f.ref, seen)
	}
	walk(EmbeddedSchema().split.fastItem, map[*fastSchema]bool{})
	if classes < 2 {
		t.Errorf("the task schema has %d class patterns, want at least 2 (label, CEL check name): is classPattern in use?", classes)
	}
}

// FuzzClassPatternSame compares a class pattern with its regexp on any
// input.
func FuzzClassPatternSame(f *testing.F) {
	for _, s := range classInputs {
		f.Add(s)
	}
	type pair struct {
		re *regexp.Regexp
		p  *classPattern
	}
	var pairs []pair
	for src := range classPatterns {
		re := regexp.MustCompile(src)
		if p := newClassPattern(re); p != nil {
			pairs = append(pairs, pair{re, p})
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, pr := range pairs {
			if got, want := pr.p.MatchString(s), pr.re.MatchString(s); got != want {
				t.Errorf("class pattern %q matches %q: %v, the regexp: %v", pr.re, s, got, want)
			}
		}
	})
}
