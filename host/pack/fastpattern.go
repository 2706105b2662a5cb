package pack

import (
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// The pack schema's patterns are nearly all one character of a set, then
// any number of another's ("^[a-z][a-z0-9_]*$"), and one is matched for
// every label and CEL check name of every task. classPattern matches such a
// pattern with two byte tables instead of the regexp machine; any other
// pattern keeps its regexp.

// classPattern is a compiled "^[first][rest]*$" of ASCII characters.
type classPattern struct {
	first, rest [utf8.RuneSelf]bool
}

// newClassPattern returns the class pattern that matches exactly what re
// matches, or nil when re is not of that form (or not a Go regexp, whose
// syntax it reads).
func newClassPattern(re any) *classPattern {
	gre, ok := re.(*regexp.Regexp)
	if !ok {
		return nil
	}
	ast, err := syntax.Parse(gre.String(), syntax.Perl)
	if err != nil || ast.Op != syntax.OpConcat || len(ast.Sub) != 4 ||
		ast.Sub[0].Op != syntax.OpBeginText || ast.Sub[2].Op != syntax.OpStar || ast.Sub[3].Op != syntax.OpEndText {
		return nil
	}
	p := &classPattern{}
	if !asciiClass(ast.Sub[1], &p.first) || !asciiClass(ast.Sub[2].Sub[0], &p.rest) {
		return nil
	}
	return p
}

// asciiClass sets the table to the characters one node of a regexp
// matches, when it matches one ASCII character of a set (and no other
// character, whatever the case).
func asciiClass(re *syntax.Regexp, table *[utf8.RuneSelf]bool) bool {
	if re.Flags&syntax.FoldCase != 0 {
		return false
	}
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) != 1 || re.Rune[0] >= utf8.RuneSelf {
			return false
		}
		table[re.Rune[0]] = true
		return true
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo < 0 || hi >= utf8.RuneSelf {
				return false
			}
			for c := lo; c <= hi; c++ {
				table[c] = true
			}
		}
		return len(re.Rune) > 0
	}
	return false
}

// MatchString reports whether s is one first character then rest ones; a
// byte outside ASCII is in neither set.
func (p *classPattern) MatchString(s string) bool {
	if len(s) == 0 || s[0] >= utf8.RuneSelf || !p.first[s[0]] {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || !p.rest[s[i]] {
			return false
		}
	}
	return true
}
