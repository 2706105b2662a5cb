package store

import (
	"slices"
	"testing"
)

// TestChunkSizesCoverSizes: a write prepared with prepareAll has a
// statement for every row count sizes gives, whatever its row count, and
// sizes inserts exactly n rows.
func TestChunkSizesCoverSizes(t *testing.T) {
	all := chunkSizes()
	for n := 0; n <= 3*sqliteStatementRows+1; n++ {
		sum := 0
		sizes(n, func(rows int) error {
			if !slices.Contains(all, rows) {
				t.Errorf("n = %d: sizes gave %d rows, which prepareAll does not prepare (%v)", n, rows, all)
			}
			sum += rows
			return nil
		})
		if sum != n {
			t.Errorf("n = %d: sizes inserted %d rows", n, sum)
		}
	}
}
