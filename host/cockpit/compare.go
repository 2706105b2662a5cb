package cockpit

import (
	"sort"

	"github.com/assay-eval/assay/host/store"
)

// compareView is two candidates task by task.
type compareView struct {
	Pack, A, B string
	Rows       []deltaRow
	MeanDelta  *float64
	Note       string
}

// deltaRow is one task's turn scores and B minus A.
type deltaRow struct {
	Label string
	A, B  *float64
	Delta *float64
}

// compareTasks pairs two candidates' stored turns by task label: B's turn
// score minus A's where both scored, and the mean of those deltas. It works
// on stored turn rows only; `assay compare` computes the same from its own
// reader (one day they should share it).
func compareTasks(a, b []store.TurnRow) ([]deltaRow, *float64) {
	byLabel := map[string]*deltaRow{}
	for _, t := range a {
		byLabel[t.Label] = &deltaRow{Label: t.Label, A: t.TurnScore}
	}
	for _, t := range b {
		r := byLabel[t.Label]
		if r == nil {
			r = &deltaRow{Label: t.Label}
			byLabel[t.Label] = r
		}
		r.B = t.TurnScore
	}
	rows := make([]deltaRow, 0, len(byLabel))
	var sum float64
	n := 0
	for _, r := range byLabel {
		if r.A != nil && r.B != nil {
			d := *r.B - *r.A
			r.Delta = &d
			sum += d
			n++
		}
		rows = append(rows, *r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Label < rows[j].Label })
	if n == 0 {
		return rows, nil
	}
	mean := sum / float64(n)
	return rows, &mean
}
