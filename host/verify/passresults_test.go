package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unsafe"

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
			infos[tk.Label] = &taskInfo{task: tk, order: int32(i)}
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

// TestBlobSetGenerations: a blob set remembers at least the last
// blobSetGeneration names and at most twice that; a name met again while
// remembered is not new, one forgotten is new again, and a name met every
// so often (a snapshot many turns share) is never forgotten however many
// names pass between.
func TestBlobSetGenerations(t *testing.T) {
	t.Parallel()
	name := func(i int) string { return sha256Hex([]byte(strconv.Itoa(i))) }
	shared, other := sha256Hex([]byte("shared")), "snapshot-not-hex"
	var s blobSet
	const n = 5*blobSetGeneration + 17
	for i := range n {
		if !s.insert(name(i)) {
			t.Fatalf("insert(name %d) = false for a name not added, want true", i)
		}
		if i%(blobSetGeneration/2) == 0 {
			for _, sh := range []string{shared, other} {
				if got, want := s.insert(sh), i == 0; got != want {
					t.Fatalf("after %d names: insert(%q) = %v, want %v", i, sh, got, want)
				}
			}
		}
		if got := s.cur.len() + s.prev.len(); got > 2*blobSetGeneration {
			t.Fatalf("after %d names the set holds %d, want at most %d", i+1, got, 2*blobSetGeneration)
		}
	}
	for i := n - blobSetGeneration; i < n; i++ {
		if !s.has(name(i)) {
			t.Fatalf("name %d of the last %d forgotten", i, blobSetGeneration)
		}
	}
	if s.has(name(0)) {
		t.Fatal("the first name is still remembered after five generations")
	}
	if !s.insert(name(0)) {
		t.Fatal("insert(the first name) = false once forgotten, want true: the store is sent it again")
	}
}

// TestPassResultsShareRepeats: results whose checks, failure tags and
// scores repeat come out of a pass saying exactly what was put — numbers
// bit for bit (0 and -0 apart), nil and empty evidence apart — and those
// that repeat hold one copy; appending to one result's checks or tags
// leaves the others alone.
func TestPassResultsShareRepeats(t *testing.T) {
	t.Parallel()
	negZero := math.Copysign(0, -1)
	checkVariants := [][]CheckResult{
		{{Name: "k", Source: "scorer:s", Score: 1, Passed: true, Detail: "found"}},
		{{Name: "k", Source: "scorer:s", Score: 0, Passed: false, Detail: "found", FailureTag: "t"}},
		{{Name: "k", Source: "scorer:s", Score: negZero, Passed: false, Detail: "found", FailureTag: "t"}},
		{{Name: "k", Source: "scorer:s", Score: 1, Passed: true, Detail: "found", Evidence: []string{}}},
		{{Name: "k", Source: "scorer:s", Score: 1, Passed: true, Detail: "found", Evidence: []string{"e"}}},
		{{Name: "k", Source: "scorer:s", Score: 1, Passed: true, Detail: "found", Evidence: []string{"f"}}},
		{{Name: "k", Source: "scorer:s", Score: 1, Passed: true, Detail: "found"}, {Name: "c", Source: "cel", Score: 1, Passed: true}},
		{{Name: "k", Source: "scorer:t", Score: 1, Passed: true, Detail: "found"}},
		{{Name: "k", Source: "scorer:s", Score: 1, Passed: true, Detail: "other"}},
		{{Name: "j", Source: "scorer:s", Score: 1, Passed: true, Detail: "found"}},
		{{Name: "k", Source: "scorer:s", Score: 1, Passed: false, Detail: "found"}},
		{{Name: "k", Source: "scorer:s", Score: 1, Passed: false, Detail: "found", FailureTag: "u"}},
		{},
		nil,
	}
	tagVariants := [][]string{nil, {}, {"a"}, {"b"}, {"a", "b"}, {"b", "a"}}
	numVariants := []float64{0, negZero, 1, 0.9125, 0.75, 2, math.NaN(), math.Inf(1), 1e-300}
	num := func(rng *rand.Rand) *float64 {
		if rng.IntN(8) == 0 {
			return nil
		}
		f := numVariants[rng.IntN(len(numVariants))]
		return &f
	}
	copyChecks := func(cs []CheckResult) []CheckResult {
		if cs == nil {
			return nil
		}
		out := make([]CheckResult, len(cs))
		for i, c := range cs {
			out[i] = c
			if c.Evidence != nil {
				out[i].Evidence = append([]string{}, c.Evidence...)
			}
		}
		return out
	}
	bitsEqual := cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })
	rng := rand.New(rand.NewPCG(8, 16))
	for n := range 100 {
		var tasks []*pack.Task
		infos := map[string]*taskInfo{}
		for i := range 1 + rng.IntN(40) {
			tk := &pack.Task{Label: fmt.Sprintf("t%d", i), Persona: "p", Weight: 1}
			tasks = append(tasks, tk)
			infos[tk.Label] = &taskInfo{task: tk, order: int32(i)}
		}
		ways := 1 + rng.IntN(len(checkVariants)) // fewer or more distinct values than are remembered
		byMap := map[store.TurnKey]TurnResult{}
		v := &pass{candidate: "c", results: passResults{tasks: len(tasks)}}
		for _, tk := range tasks {
			for ep := 1; ep <= 1+rng.IntN(2); ep++ {
				k := store.TurnKey{Label: tk.Label, Epoch: ep}
				r := TurnResult{Candidate: "c", Label: k.Label, Epoch: ep, Status: score.StatusScored,
					ProcessScore: num(rng), KPIScore: num(rng), TurnScore: num(rng), LatencyS: num(rng), CostUSD: num(rng),
					Checks: copyChecks(checkVariants[rng.IntN(ways)]), FailureTags: slices.Clone(tagVariants[rng.IntN(len(tagVariants))])}
				if r.Checks != nil { // room to append in place, as the engine's checks have
					r.Checks = slices.Grow(r.Checks, 1)
				}
				if r.FailureTags != nil {
					r.FailureTags = slices.Grow(r.FailureTags, 1)
				}
				want := r
				want.Checks = copyChecks(r.Checks)
				want.FailureTags = slices.Clone(r.FailureTags)
				for _, f := range [...]**float64{&want.ProcessScore, &want.KPIScore, &want.TurnScore, &want.LatencyS, &want.CostUSD} {
					if *f != nil {
						c := **f
						*f = &c
					}
				}
				byMap[k] = want
				v.results.put(infos[k.Label], k, r)
			}
		}
		want := inTaskOrderByMap("c", byMap, tasks)
		got := v.inTaskOrder(tasks)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(TurnResult{}), bitsEqual); diff != "" {
			t.Fatalf("case %d: inTaskOrder (-put +kept):\n%s", n, diff)
		}
		// Appending to a result's checks or tags changes no other result,
		// nor what was appended to another.
		appended := make([][]CheckResult, len(got))
		tagged := make([][]string, len(got))
		for i := range got {
			appended[i] = append(got[i].Checks, CheckResult{Name: fmt.Sprint(i)})
			tagged[i] = append(got[i].FailureTags, fmt.Sprint(i))
		}
		for i := range got {
			if a, tg := appended[i][len(appended[i])-1].Name, tagged[i][len(tagged[i])-1]; a != fmt.Sprint(i) || tg != fmt.Sprint(i) {
				t.Fatalf("case %d: result %d appended check %q and tag %q, want %d: another append wrote over them", n, i, a, tg, i)
			}
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(TurnResult{}), bitsEqual); diff != "" {
			t.Fatalf("case %d: after appending to each result (-put +kept):\n%s", n, diff)
		}
	}
}

// TestPassResultsHoldRepeatsOnce: 1,000 results with the same checks, tags
// and scores hold one copy of each, and one keptLists and keptRest.
func TestPassResultsHoldRepeatsOnce(t *testing.T) {
	t.Parallel()
	var tasks []*pack.Task
	v := &pass{candidate: "c", results: passResults{tasks: 1000}}
	for i := range 1000 {
		tk := &pack.Task{Label: fmt.Sprintf("t%d", i), Weight: 1}
		tasks = append(tasks, tk)
		s, lat := 0.9125, 2.0
		v.results.put(&taskInfo{task: tk, order: int32(i)}, store.TurnKey{Label: tk.Label, Epoch: 1}, TurnResult{
			Label: tk.Label, Epoch: 1, Status: score.StatusScored, TurnScore: &s, LatencyS: &lat,
			Checks:      []CheckResult{{Name: "k", Source: "scorer:" + "s", Score: 1, Passed: true, Detail: "found"}},
			FailureTags: []string{"slow"}})
	}
	for i, kr := range v.results.first {
		if kr.lists != v.results.first[0].lists || kr.rest != v.results.first[0].rest {
			t.Fatalf("result %d keeps lists or a rest of its own, want result 0's", i)
		}
	}
	got := v.inTaskOrder(tasks)
	for i := range got {
		if &got[i].Checks[0] != &got[0].Checks[0] || &got[i].FailureTags[0] != &got[0].FailureTags[0] ||
			got[i].TurnScore != got[0].TurnScore || got[i].LatencyS != got[0].LatencyS {
			t.Fatalf("result %d holds its own copy of what result 0 holds, want one copy shared", i)
		}
	}
}

// TestKeptResultIsTheResult: a result kept by a pass gives back every
// field of it — each exported field of TurnResult set alone, nil and empty
// lists apart — and results that differ in what their keptRest holds do
// not share one.
func TestKeptResultIsTheResult(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf(TurnResult{})
	var variants []TurnResult
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		for _, empty := range []bool{false, true} {
			var r TurnResult
			v := reflect.ValueOf(&r).Elem().Field(i)
			switch v.Kind() {
			case reflect.String:
				v.SetString("v" + f.Name)
			case reflect.Int:
				v.SetInt(int64(7 + i))
			case reflect.Bool:
				v.SetBool(true)
			case reflect.Pointer:
				x := float64(i) + 0.5
				v.Set(reflect.ValueOf(&x))
			case reflect.Slice:
				n := 1
				if empty {
					n = 0
				}
				s := reflect.MakeSlice(f.Type, n, n)
				if n > 0 && f.Type.Elem().Kind() == reflect.String {
					s.Index(0).SetString("v" + f.Name)
				} else if n > 0 {
					s.Index(0).Set(reflect.ValueOf(CheckResult{Name: "v" + f.Name, Evidence: []string{}}))
				}
				v.Set(s)
			case reflect.Struct:
				v.Set(reflect.ValueOf(ScorerRef{ID: "i", Version: "v", SHA256: "h"}))
			default:
				t.Fatalf("TurnResult.%s: a %s, which this test cannot set: teach it", f.Name, v.Kind())
			}
			variants = append(variants, r)
		}
	}
	var s repeats
	kept := make([]keptResult, len(variants))
	for i := range variants {
		r := variants[i]
		kept[i] = s.keep(&r)
	}
	for i, want := range variants {
		if diff := cmp.Diff(want, kept[i].result(want.Label), cmp.AllowUnexported(TurnResult{})); diff != "" {
			t.Errorf("variant %d: kept result (-put +given back):\n%s", i, diff)
		}
	}
}

// TestWholeRunSizes: what a pass keeps of each task and each turn for the
// whole run stays as small as docs/performance.md says (the fourteenth
// round): a kept result 72 bytes, a task's entry in the engine's index
// 64. Each is 10,000 times over in a run of a 10,000-task pack.
func TestWholeRunSizes(t *testing.T) {
	t.Parallel()
	if got := unsafe.Sizeof(keptResult{}); got > 72 {
		t.Errorf("keptResult is %d bytes, want at most 72", got)
	}
	if got := unsafe.Sizeof(taskInfo{}); got > 64 {
		t.Errorf("taskInfo is %d bytes, want at most 64", got)
	}
}
