package pack

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/pkg/diag"
)

// TestPackAliasExpandedSize covers issue 14 item 5: a 1.2 MB pack with one
// 300 KB scalar aliased 9,000 times is refused at the alias that takes the
// expanded text past MaxAliasBytes, before anything is expanded further.
func TestPackAliasExpandedSize(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("big: &big " + strings.Repeat("x", 300<<10) + "\nlist:\n")
	for range 9000 {
		b.WriteString("  - *big\n")
	}
	for b.Len() < 1200<<10 {
		b.WriteString("# padding to the size of the pack that was seen\n")
	}
	p, list := Parse("bomb.yaml", []byte(b.String()), Options{Scorers: testCatalog()})
	if p != nil {
		t.Fatalf("Parse(alias bomb) = a pack, want it refused")
	}
	var got []diag.Diagnostic
	for _, d := range list {
		if d.Code == CodeAlias {
			got = append(got, d)
		}
	}
	// The 14th alias (line 16) passes 4 MiB: 14 × 300 KiB = 4,300,800 bytes.
	want := []diag.Diagnostic{{Pos: diag.Pos{File: "bomb.yaml", Line: 16, Col: 5}, Severity: diag.Error, Code: CodeAlias,
		Message: "aliases expand the pack by more than 4 MiB of text (this alias *big adds 307200 bytes, 14 aliases so far); refusing a possible alias bomb"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse(alias bomb) %s diagnostics (-want +got):\n%s\nall: %v", CodeAlias, diff, list)
	}
}
