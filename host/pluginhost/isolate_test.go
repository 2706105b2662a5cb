package pluginhost_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/sdk/batchrun"
)

// scoreConcurrently scores batches[g] from goroutine g, all at once, and
// returns each batch's summary and errors.
func scoreConcurrently(h *pluginhost.Host, id scorer.ID, batches [][]*scorer.Case) (got [][]string, errs [][]error) {
	got, errs = make([][]string, len(batches)), make([][]error, len(batches))
	var wg sync.WaitGroup
	for g, b := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[g], errs[g] = summary(h.Score(context.Background(), id, b))
		}()
	}
	wg.Wait()
	return got, errs
}

// labelBatches builds n batches of size cases each; the label of case i of
// batch g is special[g][i] when set, else "g<g>-<i>". want is what summary
// should report when only the special cases fail.
func labelBatches(n, size int, special map[[2]int]string) (batches [][]*scorer.Case, want [][]string) {
	for g := 0; g < n; g++ {
		labels := make([]string, size)
		w := make([]string, size)
		for i := range labels {
			labels[i] = fmt.Sprintf("g%d-%d", g, i)
			w[i] = "ok:" + labels[i]
			if l, ok := special[[2]int{g, i}]; ok {
				labels[i], w[i] = l, "err"
			}
		}
		batches = append(batches, labelled(labels...))
		want = append(want, w)
	}
	return batches, want
}

// TestCrashingTurnCostsOnlyItself (issue 12 item 4): with many batches in
// flight on one plugin, cases that make the process exit fail, and only
// they: every batch the crash took down with it is run again on a process
// of its own, and its cases one at a time when that breaks too.
func TestCrashingTurnCostsOnlyItself(t *testing.T) {
	t.Parallel()
	h := short(manifest())
	defer h.Close()
	exits := map[[2]int]string{{0, 3}: "exit", {2, 0}: "exit_a", {2, 19}: "exit_b", {5, 7}: "exit", {5, 8}: "exit", {7, 11}: "exit"}
	batches, want := labelBatches(8, 20, exits)
	got, errs := scoreConcurrently(h, "test_exit", batches)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Score(test_exit) with %d exiting cases in 8 concurrent batches (-want +got):\n%s\nerrors: %v", len(exits), diff, errs)
	}
	for _, es := range errs {
		for _, err := range es {
			if !errors.Is(err, pluginhost.ErrCrashed) || !strings.Contains(err.Error(), fmt.Sprintf("run alone %d time(s)", pluginhost.CaseAttempts)) {
				t.Errorf("Score(test_exit) error = %v, want ErrCrashed after %d attempts alone", err, pluginhost.CaseAttempts)
			}
		}
	}
}

// TestRestartBudgetIsPerCase (issue 12 item 4): more cases than
// MaxBrokenStreak each crash the plugin once and score on a fresh process;
// every one of them is scored, because the budget is counted per case.
func TestRestartBudgetIsPerCase(t *testing.T) {
	t.Parallel()
	h := short(manifest())
	defer h.Close()
	prefix := fmt.Sprintf("budget-%d-%d-", os.Getpid(), time.Now().UnixNano())
	n := pluginhost.MaxBrokenStreak + 4
	cases := make([]*scorer.Case, n)
	for i := range cases {
		cases[i] = &scorer.Case{ID: fmt.Sprintf("%s%d", prefix, i), Task: scorer.Task{Label: "once_exit"}}
	}
	t.Cleanup(func() {
		for _, c := range cases {
			os.Remove(filepath.Join(os.TempDir(), "assay-test-once-exit-"+c.ID))
		}
	})
	got, errs := summary(h.Score(context.Background(), "test_exit", cases))
	want := make([]string, n)
	for i := range want {
		want[i] = "ok:once_exit"
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Score(%d cases that each crash once) (-want +got):\n%s\nerrors: %v", n, diff, errs)
	}
}

// TestHangingScorerIsNotASlowRun (issue 12 item 5): cases that hang fail
// with an error naming the deadline, and only they; the run takes a small
// multiple of one batch's deadline, not a deadline per case. (Not parallel:
// it measures time.)
func TestHangingScorerIsNotASlowRun(t *testing.T) {
	const base, size = time.Second, 16
	h := short(manifest(), pluginhost.WithCallTimeout(base))
	defer h.Close()
	hangs := map[[2]int]string{{1, 4}: "sleep", {3, 0}: "sleep_a", {3, 15}: "sleep_b"}
	batches, want := labelBatches(4, size, hangs)
	begin := time.Now()
	got, errs := scoreConcurrently(h, "test_sleep", batches)
	elapsed := time.Since(begin)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Score(test_sleep) with %d hanging cases (-want +got):\n%s\nerrors: %v", len(hangs), diff, errs)
	}
	for _, es := range errs {
		for _, err := range es {
			if !errors.Is(err, pluginhost.ErrDeadline) || !strings.Contains(err.Error(), "no answer within 1.05s") {
				t.Errorf("Score(test_sleep) error = %v, want ErrDeadline naming the 1.05s deadline of one case", err)
			}
		}
	}
	batchDeadline := base + size*base/pluginhost.PerCaseShare
	if limit := 5 * batchDeadline; elapsed > limit {
		t.Errorf("Score(test_sleep) took %v, want at most %v (5 × the %v deadline of a batch)", elapsed, limit, batchDeadline)
	}
	t.Logf("%d hanging cases in 4 batches of %d: %v", len(hangs), size, elapsed)
}

// TestScorerHangingOnEveryCallGivesUp (issue 12 item 5): a plugin that
// hangs on every case costs a bounded time: after MaxBrokenStreak cases in
// a row hang alone, the host stops calling it, and every case says why.
// (Not parallel: it measures time.)
func TestScorerHangingOnEveryCallGivesUp(t *testing.T) {
	const base, size = 300 * time.Millisecond, 64
	h := short(manifest(), pluginhost.WithCallTimeout(base))
	defer h.Close()
	every := map[[2]int]string{}
	for g := 0; g < 4; g++ {
		for i := 0; i < size; i++ {
			every[[2]int{g, i}] = "sleep"
		}
	}
	batches, _ := labelBatches(4, size, every)
	begin := time.Now()
	_, errs := scoreConcurrently(h, "test_sleep", batches)
	elapsed := time.Since(begin)
	gaveUp := 0
	for _, es := range errs {
		if len(es) != size {
			t.Fatalf("Score(hang on every case) failed %d of %d cases, want all", len(es), size)
		}
		for _, err := range es {
			switch {
			case errors.Is(err, pluginhost.ErrGaveUp):
				gaveUp++
			case errors.Is(err, pluginhost.ErrDeadline):
			default:
				t.Errorf("Score(hang on every case) error = %v, want ErrDeadline or ErrGaveUp", err)
			}
		}
	}
	if gaveUp == 0 {
		t.Errorf("Score(hang on every case): no case failed with ErrGaveUp")
	}
	alone := base + base/pluginhost.PerCaseShare
	if limit := time.Duration(size) * alone / 2; elapsed > limit {
		t.Errorf("Score(hang on every case) took %v, want under %v (half of one batch's cases hanging alone)", elapsed, limit)
	}
	t.Logf("every case hangs: %v, %d cases given up", elapsed, gaveUp)
}

// sleeper is an in-process scorer that ignores its context on "sleep".
type sleeper struct{}

func (sleeper) Describe() scorer.Description {
	return scorer.Description{ID: "sleeper", Version: "1", KPIs: []scorer.KPI{}}
}

func (sleeper) Score(_ context.Context, c *scorer.Case) (*scorer.Result, error) {
	if c.Task.Label == "sleep" {
		time.Sleep(10 * time.Second)
	}
	return &scorer.Result{Score: 1}, nil
}

var _ batchrun.Scorer = sleeper{}

// TestInProcessDeadline (issue 12 item 5): an in-process scorer that hangs
// past the deadline fails its own case with ErrDeadline; the others score.
func TestInProcessDeadline(t *testing.T) {
	t.Parallel()
	h := pluginhost.New(&pluginhost.Manifest{}, pluginhost.WithInProcess(sleeper{}), pluginhost.WithCallTimeout(200*time.Millisecond))
	begin := time.Now()
	got, errs := summary(h.Score(context.Background(), "sleeper", labelled("a", "sleep", "b")))
	if diff := cmp.Diff([]string{"ok:", "err", "ok:"}, got); diff != "" {
		t.Fatalf("Score(in-process hang) (-want +got):\n%s\nerrors: %v", diff, errs)
	}
	if !errors.Is(errs[0], pluginhost.ErrDeadline) {
		t.Errorf("Score(in-process hang) error = %v, want ErrDeadline", errs[0])
	}
	if elapsed := time.Since(begin); elapsed > 3*time.Second {
		t.Errorf("Score(in-process hang) took %v, want under 3s", elapsed)
	}
}

// TestCloseDuringIsolation: closing the host while a lost batch is being
// isolated ends the Score call promptly, every case failed, none relaunched.
func TestCloseDuringIsolation(t *testing.T) {
	t.Parallel()
	h := short(manifest(), pluginhost.WithCallTimeout(200*time.Millisecond))
	done := make(chan []batchrun.Outcome)
	go func() {
		done <- h.Score(context.Background(), "test_sleep", labelled("sleep", "sleep_a", "sleep_b", "sleep_c"))
	}()
	time.Sleep(time.Second) // the batch times out; its cases hang alone one by one
	begin := time.Now()
	h.Close()
	select {
	case outs := <-done:
		for _, o := range outs {
			if o.Err == nil {
				t.Errorf("Score after Close: a case scored, want every case failed")
			}
		}
		if elapsed := time.Since(begin); elapsed > 2*time.Second {
			t.Errorf("Score returned %v after Close, want promptly", elapsed)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Score did not return within 10s of Close")
	}
}

// TestCaseFailedOnceIsScoredOnRetry: a case the scorer failed in an
// answered batch (it panicked) is tried once more alone; scored then, it
// is marked ScoredOnRetry and says so, while its batch's other case is a
// first answer.
func TestCaseFailedOnceIsScoredOnRetry(t *testing.T) {
	t.Parallel()
	h := short(manifest())
	defer h.Close()
	prefix := fmt.Sprintf("oncepanic-%d-%d-", os.Getpid(), time.Now().UnixNano())
	cases := []*scorer.Case{
		{ID: prefix + "0", Task: scorer.Task{Label: "calm"}},
		{ID: prefix + "1", Task: scorer.Task{Label: "once_panic"}},
	}
	t.Cleanup(func() { os.Remove(filepath.Join(os.TempDir(), "assay-test-once-panic-"+cases[1].ID)) })
	outs := h.Score(context.Background(), "test_exit", cases)
	for i, o := range outs {
		if o.Err != nil || o.Result == nil {
			t.Fatalf("case %d: %v, want a result", i, o.Err)
		}
		diags := strings.Join(o.Result.Diagnostics, "\n")
		if want := i == 1; o.ScoredOnRetry != want || strings.Contains(diags, "scored alone") != want {
			t.Errorf("case %d (%s): ScoredOnRetry %t, diagnostics %q; want retried %t", i, cases[i].Task.Label, o.ScoredOnRetry, diags, want)
		}
	}
}

// TestRetriedResultSaysSo: a case scored only after its batch lost the
// plugin process carries a diagnostic saying it was retried; a retry never
// passes as a first answer.
func TestRetriedResultSaysSo(t *testing.T) {
	t.Parallel()
	h := short(manifest())
	defer h.Close()
	prefix := fmt.Sprintf("retried-%d-%d-", os.Getpid(), time.Now().UnixNano())
	cases := []*scorer.Case{
		{ID: prefix + "0", Task: scorer.Task{Label: "calm"}},
		{ID: prefix + "1", Task: scorer.Task{Label: "once_exit"}},
	}
	t.Cleanup(func() {
		for _, c := range cases {
			os.Remove(filepath.Join(os.TempDir(), "assay-test-once-exit-"+c.ID))
		}
	})
	for i, o := range h.Score(context.Background(), "test_exit", cases) {
		if o.Err != nil || o.Result == nil {
			t.Fatalf("case %d: %v, want a result", i, o.Err)
		}
		if !strings.Contains(strings.Join(o.Result.Diagnostics, "\n"), "retried") {
			t.Errorf("case %d diagnostics = %q, want a note that it was retried", i, o.Result.Diagnostics)
		}
		if !o.ScoredOnRetry {
			t.Errorf("case %d: ScoredOnRetry = false, want true", i)
		}
	}
	// A first answer is not marked: a batch the plugin answers whole.
	calm := []*scorer.Case{{ID: prefix + "2", Task: scorer.Task{Label: "calm"}}, {ID: prefix + "3", Task: scorer.Task{Label: "calm"}}}
	for i, o := range h.Score(context.Background(), "test_exit", calm) {
		if o.Err != nil || o.Result == nil || o.ScoredOnRetry || strings.Contains(strings.Join(o.Result.Diagnostics, "\n"), "retried") {
			t.Errorf("first answer %d: err %v, ScoredOnRetry %t, result %+v; want a plain result", i, o.Err, o.ScoredOnRetry, o.Result)
		}
	}
}
