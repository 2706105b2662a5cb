package excerpt

import (
	"fmt"
	"strings"
)

// Escape makes s safe to print on a terminal: every control character (C0,
// DEL and C1, including ESC, which starts terminal escape and OSC
// sequences, and NUL) is written as a visible escape, `\x1b` for C0 and
// DEL, `\u009b` for C1. Tab and newline are kept; use EscapeLine for text
// that must stay on one line. Invalid UTF-8 becomes U+FFFD.
func Escape(s string) string { return escape(s, false) }

// EscapeLine is Escape that also escapes newline (as `\n`) and tab (as `\t`),
// for text printed on one line.
func EscapeLine(s string) string { return escape(s, true) }

func escape(s string, line bool) string {
	if clean(s, line) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if !isControl(r, line) {
			b.WriteRune(r) // what EscapeRune returns, without its string
			continue
		}
		b.WriteString(EscapeRune(r, line))
	}
	return b.String()
}

// clean reports whether s needs no escaping (ASCII printable, no invalid
// UTF-8), the common case, without allocating.
func clean(s string, line bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return cleanRunes(s[i:], line)
		}
		if isControl(rune(c), line) {
			return false
		}
	}
	return true
}

func cleanRunes(s string, line bool) bool {
	for _, r := range s {
		if r == '\uFFFD' || isControl(r, line) {
			return false // U+FFFD may stand for an invalid byte: let escape decide
		}
	}
	return true
}

// EscapeRune is r as Escape writes it: itself, or its visible escape when
// it is a control character (newline and tab too when line is set).
func EscapeRune(r rune, line bool) string {
	switch {
	case !isControl(r, line):
		return string(r)
	case r == '\n':
		return `\n`
	case r == '\t':
		return `\t`
	case r < 0x80:
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

func isControl(r rune, line bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return line
	case r < 0x20 || r == 0x7f:
		return true
	}
	return r >= 0x80 && r <= 0x9f
}
