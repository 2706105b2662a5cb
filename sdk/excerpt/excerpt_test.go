package excerpt_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/assay-eval/assay/sdk/excerpt"
)

func TestBound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		in            string
		wantTruncated bool
		wantPrefix    string
	}{
		{"empty", "", false, ""},
		{"500 ascii", strings.Repeat("a", 500), false, ""},
		{"501 ascii", strings.Repeat("a", 501), true, strings.Repeat("a", 487)},
		{"501 multi-byte", strings.Repeat("日", 501), true, strings.Repeat("日", 487)},
		{"900 mixed", strings.Repeat("ab€😀", 225), true, strings.Repeat("ab€😀", 121) + "ab€"},
		{"500 emoji counts 500 runes", strings.Repeat("😀", 500), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, truncated := excerpt.Bound(tt.in)
			if truncated != tt.wantTruncated {
				t.Fatalf("Bound(%d runes) truncated = %v, want %v", utf8.RuneCountInString(tt.in), truncated, tt.wantTruncated)
			}
			want := tt.in
			if tt.wantTruncated {
				want = tt.wantPrefix + excerpt.Marker
			}
			if got != want {
				t.Errorf("Bound(%d runes) = %q, want %q", utf8.RuneCountInString(tt.in), got, want)
			}
			if n := utf8.RuneCountInString(got); tt.wantTruncated && n != excerpt.Max {
				t.Errorf("Bound(%d runes) has %d runes, want %d", utf8.RuneCountInString(tt.in), n, excerpt.Max)
			}
		})
	}
	if n := utf8.RuneCountInString(excerpt.Marker); n != 13 || !strings.HasPrefix(excerpt.Marker, "\u2026") {
		t.Errorf("Marker = %q (%d runes), want 13 runes starting with U+2026", excerpt.Marker, n)
	}
}

func TestCut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 2, "ab"},
		{"abc", 5, "abc"},
		{"日本語", 1, "日"},
		{"", 3, ""},
	}
	for _, tt := range tests {
		if got := excerpt.Cut(tt.in, tt.n); got != tt.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
