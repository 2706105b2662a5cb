package verify

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/score"
	"github.com/assay-eval/assay/host/store"
)

// inTaskOrderByMap is inTaskOrder as it was with the results in a map by
// turn: the order passResults must give.
func inTaskOrderByMap(candidate string, results map[store.TurnKey]TurnResult, tasks []*pack.Task) []TurnResult {
	epochs := map[string][]int{}
	for k := range results {
		epochs[k.Label] = append(epochs[k.Label], k.Epoch)
	}
	out := []TurnResult{}
	for _, t := range tasks {
		es := epochs[t.Label]
		sort.Ints(es)
		if len(es) == 0 {
			out = append(out, TurnResult{Candidate: candidate, Label: t.Label, Epoch: 1, Persona: t.Persona,
				Status: score.StatusMissing, Checks: []CheckResult{}, FailureTags: []string{}, weight: t.Weight, sliceTags: t.SliceTags})
			continue
		}
		for _, ep := range es {
			r := results[store.TurnKey{Label: t.Label, Epoch: ep}]
			r.weight, r.sliceTags = t.Weight, t.SliceTags
			out = append(out, r)
		}
	}
	return out
}

// TestPassResultsInTaskOrder: results put in any order, epoch 1 or not,
// some tasks without any, come out as a map of them sorted by task and
// epoch did.
func TestPassResultsInTaskOrder(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(16, 7))
	for n := range 200 {
		var tasks []*pack.Task
		infos := map[string]*taskInfo{}
		for i := range rng.IntN(12) {
			tk := &pack.Task{Label: fmt.Sprintf("t%d", i), Persona: "p", Weight: float64(1 + i%3), SliceTags: []string{"s"}}
			tasks = append(tasks, tk)
			infos[tk.Label] = &taskInfo{task: tk, order: i}
		}
		byMap := map[store.TurnKey]TurnResult{}
		v := &pass{candidate: "c", results: passResults{tasks: len(tasks)}}
		maxEpoch := 1 + rng.IntN(3)*rng.IntN(2)
		for range rng.IntN(3 * (len(tasks) + 1)) {
			if len(tasks) == 0 {
				break
			}
			tk := tasks[rng.IntN(len(tasks))]
			k := store.TurnKey{Label: tk.Label, Epoch: 1 + rng.IntN(maxEpoch)}
			r := TurnResult{Candidate: "c", Label: k.Label, Epoch: k.Epoch, Status: score.StatusScored, ToolCalls: rng.IntN(100)}
			byMap[k] = r
			v.results.put(infos[k.Label], k, r)
		}
		want := inTaskOrderByMap("c", byMap, tasks)
		got := v.inTaskOrder(tasks)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(TurnResult{})); diff != "" {
			t.Fatalf("case %d: inTaskOrder (-map +passResults):\n%s", n, diff)
		}
	}
}

// TestBlobSet: a blob set holds the names added to it, whatever their
// form: lowercase hex digests (kept as bytes), uppercase hex, short
// names and the empty name stay distinct.
func TestBlobSet(t *testing.T) {
	t.Parallel()
	lower := sha256Hex([]byte("x"))
	upper := strings.ToUpper(lower)
	names := []string{lower, upper, sha256Hex([]byte("y")), "abc", "", lower[:63] + "g"}
	var s blobSet
	for i, n := range names {
		for j, m := range names {
			if got := s.has(m); got != (j < i) {
				t.Fatalf("after adding %q: has(%q) = %v, want %v", names[:i], m, got, j < i)
			}
		}
		if !s.insert(n) {
			t.Fatalf("insert(%q) = false for a name not added, want true", n)
		}
		if s.insert(n) {
			t.Fatalf("insert(%q) = true the second time, want false", n)
		}
	}
}
