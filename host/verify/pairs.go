package verify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"

	"github.com/assay-eval/assay/host/score"
)

// Pairs are pairs of candidates: the frontier pairs that are not
// distinguishable on the data (Report.NotDistinguishable). Their number
// grows with the square of the frontier (a thousand indistinguishable
// candidates make half a million pairs), so a verification keeps the
// frontier and its intervals and enumerates the pairs when they are
// written, never all of them at once (docs/performance.md). In JSON they
// are an array of two-string arrays.
type Pairs struct {
	list     [][2]string // pairs given as such (read from JSON)
	frontier []string
	ci       [][]float64 // the mean score interval of each frontier candidate
}

// PairsOf is the list of pairs as Pairs.
func PairsOf(list [][2]string) Pairs { return Pairs{list: list} }

// notDistinguishable are the pairs of frontier candidates whose mean score
// intervals overlap (NotDistinguishable), enumerated when needed.
func notDistinguishable(frontier []string, sums []score.Summary) Pairs {
	byName := make(map[string][]float64, len(sums))
	for _, s := range sums {
		byName[s.Candidate] = s.MeanScoreCI95
	}
	p := Pairs{frontier: frontier, ci: make([][]float64, len(frontier))}
	for i, c := range frontier {
		p.ci[i] = byName[c]
	}
	return p
}

// All yields the pairs in order: for a frontier, each candidate with every
// later one whose interval overlaps its own.
func (p Pairs) All() iter.Seq2[string, string] {
	return func(yield func(a, b string) bool) {
		for _, x := range p.list {
			if !yield(x[0], x[1]) {
				return
			}
		}
		p.eachIndex(func(i, j int) bool { return yield(p.frontier[i], p.frontier[j]) })
	}
}

// eachIndex calls f with the frontier indexes of each pair until it
// returns false.
func (p Pairs) eachIndex(f func(i, j int) bool) {
	for i := range p.frontier {
		for j := i + 1; j < len(p.frontier); j++ {
			if score.Overlap(p.ci[i], p.ci[j]) && !f(i, j) {
				return
			}
		}
	}
}

// List is every pair, in order; never nil.
func (p Pairs) List() [][2]string {
	out := [][2]string{}
	for a, b := range p.All() {
		out = append(out, [2]string{a, b})
	}
	return out
}

// MarshalJSON writes the pairs as an array of two-string arrays (all in
// memory: Report.WriteJSON streams them).
func (p Pairs) MarshalJSON() ([]byte, error) { return json.Marshal(p.List()) }

// UnmarshalJSON reads an array of two-string arrays.
func (p *Pairs) UnmarshalJSON(b []byte) error {
	var list [][2]string
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*p = Pairs{list: list}
	return nil
}

// The members WriteJSON streams open so in its output when empty; a
// literal newline before one is structural (a string's newline is
// escaped), so each is found only where the member is.
const (
	candidatesKey = "\n  \"candidates\": ["
	pairsKey      = "\n  \"frontier_not_distinguishable\": ["
)

// WriteJSON writes the report as a json.Encoder indenting by two spaces
// writes it (summary.json, `assay verify --format json`), byte for byte,
// one candidate and one not-distinguishable pair at a time: a report of
// many candidates is never in memory as JSON all at once.
func (r *Report) WriteJSON(w io.Writer) error {
	shallow := *r
	shallow.Candidates, shallow.NotDistinguishable = []CandidateReport{}, Pairs{}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&shallow); err != nil {
		return err
	}
	out := buf.Bytes()
	ci := bytes.Index(out, []byte(candidatesKey+"]"))
	pi := bytes.Index(out, []byte(pairsKey+"]"))
	if ci < 0 || pi < ci {
		return fmt.Errorf("writing the report: no %q or %q member", candidatesKey, pairsKey)
	}
	ci, pi = ci+len(candidatesKey), pi+len(pairsKey)
	bw := &errWriter{w: bufio.NewWriterSize(w, 64<<10)}
	bw.write(out[:ci])
	for i := range r.Candidates {
		b, err := json.MarshalIndent(&r.Candidates[i], "    ", "  ")
		if err != nil {
			return err
		}
		if i > 0 {
			bw.write([]byte(","))
		}
		bw.write([]byte("\n    "))
		bw.write(b)
	}
	if len(r.Candidates) > 0 {
		bw.write([]byte("\n  "))
	}
	bw.write(out[ci:pi])
	quoted := map[string][]byte{} // each frontier candidate's JSON string, encoded once
	q := func(s string) []byte {
		b, ok := quoted[s]
		if !ok {
			b, _ = json.Marshal(s) // a string always encodes
			quoted[s] = b
		}
		return b
	}
	n := 0
	for a, b := range r.NotDistinguishable.All() {
		if n > 0 {
			bw.write([]byte(","))
		}
		bw.write([]byte("\n    [\n      "))
		bw.write(q(a))
		bw.write([]byte(",\n      "))
		bw.write(q(b))
		bw.write([]byte("\n    ]"))
		n++
		if bw.err != nil {
			return bw.err
		}
	}
	if n > 0 {
		bw.write([]byte("\n  "))
	}
	bw.write(out[pi:])
	if bw.err == nil {
		bw.err = bw.w.Flush()
	}
	return bw.err
}

// errWriter keeps the first write error.
type errWriter struct {
	w   *bufio.Writer
	err error
}

func (e *errWriter) write(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}
