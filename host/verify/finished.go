package verify

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// finished holds the candidates a run has verified until the run ends.
// Each is kept as its compact JSON encoding, about a third of the memory
// of the report itself (its summary's and verdict's maps), so that a run of
// many candidates does not hold a whole report for each of them while it
// scores the rest (docs/performance.md, "Flat memory"). A report that would
// not read back equal to itself (a string that is not UTF-8, an empty list
// JSON omits, a value JSON cannot hold) is kept as it is, so what Run
// returns is always the report as it was built.
type finished struct {
	items []finishedCandidate
}

// finishedCandidate is one verified candidate: its encoding, or the report
// itself when it does not round-trip.
type finishedCandidate struct {
	enc []byte
	rep *CandidateReport
}

// add keeps c.
func (f *finished) add(c *CandidateReport) {
	if b, ok := encodeCandidate(c); ok {
		f.items = append(f.items, finishedCandidate{enc: b})
		return
	}
	f.items = append(f.items, finishedCandidate{rep: c})
}

// encodeCandidate is c's compact JSON encoding, and whether it decodes
// back to a report equal to c.
func encodeCandidate(c *CandidateReport) ([]byte, bool) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, false
	}
	var back CandidateReport
	if json.Unmarshal(b, &back) != nil || !reflect.DeepEqual(&back, c) {
		return nil, false
	}
	return b, true
}

// reports are the candidates kept, in the order added; each encoding is
// dropped as it is decoded.
func (f *finished) reports() ([]CandidateReport, error) {
	out := make([]CandidateReport, len(f.items))
	for i := range f.items {
		it := &f.items[i]
		if it.rep != nil {
			out[i] = *it.rep
		} else if err := json.Unmarshal(it.enc, &out[i]); err != nil {
			return nil, fmt.Errorf("reading back verified candidate %d: %w", i, err)
		}
		*it = finishedCandidate{}
	}
	f.items = nil
	return out, nil
}
