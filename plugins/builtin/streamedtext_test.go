package builtin

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// TestNoStreamedTextUnread proves that a built-in scorer declaring
// no_streamed_text does not read the streamed text: on every fixture turn,
// and on the same turn with a different streamed text, it gives the result
// it gives when the host sends the text (as a host before SDK 1.2 does).
func TestNoStreamedTextUnread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := loadFixturePack(t)
	declared := 0
	for _, s := range Scorers() {
		d := s.Describe()
		if !d.NeedsPart(sdk.NeedNoStreamedText) {
			continue
		}
		declared++
		// the description a host that does not know the need acts on
		old := d
		old.Needs = slices.DeleteFunc(slices.Clone(d.Needs), func(n sdk.Need) bool { return n == sdk.NeedNoStreamedText })
		for _, task := range p.Tasks {
			for _, variant := range []string{"good", "bad"} {
				c := fixtureCase(t, p, task, variant)
				other := *c
				other.Turn.StreamedText = "a different streamed text: release blocker memory harness"
				for _, sent := range []*sdk.Case{c, &other} {
					want, err := s.Score(ctx, scorerpb.StripCase(old, sent))
					if err != nil {
						t.Fatalf("Score(%s, %s) with the streamed text error = %v", d.ID, c.ID, err)
					}
					stripped := scorerpb.StripCase(d, sent)
					if stripped.Turn.StreamedText != "" {
						t.Fatalf("StripCase(%s) kept the streamed text", d.ID)
					}
					got, err := s.Score(ctx, stripped)
					if err != nil {
						t.Fatalf("Score(%s, %s) without the streamed text error = %v", d.ID, c.ID, err)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("Score(%s, %s) without the streamed text (-with +without):\n%s", d.ID, c.ID, diff)
					}
				}
			}
		}
	}
	if declared == 0 {
		t.Errorf("no built-in scorer declares %s", sdk.NeedNoStreamedText)
	}
}
