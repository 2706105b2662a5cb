package excerpt_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/pkg/excerpt"
)

// TestEscapeControlCharacters covers issue 14 item 8: no control byte of an
// excerpt reaches a terminal raw.
func TestEscapeControlCharacters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want, wantLine string
	}{
		{"plain", "task create_blocker", "task create_blocker", "task create_blocker"},
		{"unicode kept", "日本 — ok", "日本 — ok", "日本 — ok"},
		{"ESC CSI", "a\x1b[31mred", `a\x1b[31mred`, `a\x1b[31mred`},
		{"OSC with BEL", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
		{"OSC 8 with ST", "\x1b]8;;http://x\x1b\\", `\x1b]8;;http://x\x1b\`, `\x1b]8;;http://x\x1b\`},
		{"NUL and DEL", "a\x00b\x7f", `a\x00b\x7f`, `a\x00b\x7f`},
		{"carriage return", "ok\rfake", `ok\x0dfake`, `ok\x0dfake`},
		{"C1 CSI", "a\u009b31m", `a\u009b31m`, `a\u009b31m`},
		{"newline and tab", "a\nb\tc", "a\nb\tc", `a\nb\tc`},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb", "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, excerpt.Escape(tt.in)); diff != "" {
				t.Errorf("Escape(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.wantLine, excerpt.EscapeLine(tt.in)); diff != "" {
				t.Errorf("EscapeLine(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}
