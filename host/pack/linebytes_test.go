package pack

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLineBytes checks lineBytes against the source split at its line
// breaks, for every line asked for in order, backwards and at random, on
// sources with CRLF, empty and long lines, with and without a final break,
// and more lines than lineStride.
func TestLineBytes(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 5000)
	var many strings.Builder
	for i := range 100 {
		many.WriteString(strings.Repeat("a", i%7))
		if i%5 == 0 {
			many.WriteString("\r")
		}
		many.WriteString("\n")
	}
	for _, src := range []string{
		"", "\n", "a", "a\n", "a\nb", "a\r\nb\r\n", "\n\n\n", long, long + "\n" + long,
		many.String(), many.String() + "tail", strings.Repeat("-\n", 3*lineStride+1),
	} {
		want := bytes.Split([]byte(src), []byte{'\n'})
		orders := [][]int{}
		var fwd, back []int
		for n := 0; n <= len(want)+1; n++ {
			fwd = append(fwd, n)
			back = append([]int{n}, back...)
		}
		rnd := rand.New(rand.NewPCG(1, uint64(len(src))))
		random := make([]int, 3*len(fwd))
		for i := range random {
			random[i] = rnd.IntN(len(want) + 2)
		}
		orders = append(orders, fwd, back, random)
		for _, order := range orders {
			d := &decoder{src: []byte(src)}
			for _, n := range order {
				got, ok := d.lineBytes(n)
				if n < 1 || n > len(want) {
					if ok {
						t.Fatalf("lineBytes(%d) of %q = %q, true; want false", n, clip(src), got)
					}
					continue
				}
				if w := bytes.TrimSuffix(want[n-1], []byte{'\r'}); !ok || !bytes.Equal(got, w) {
					t.Fatalf("lineBytes(%d) of %q = %q, %v; want %q", n, clip(src), got, ok, w)
				}
			}
		}
	}
}
