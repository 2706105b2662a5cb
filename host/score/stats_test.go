package score

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPassAtKAndPassHatK: pass@k and pass^k by hand for a task of n = 4
// epochs with c = 0..4 passes (C(4,k) = 4, 6, 4, 1).
func TestPassAtKAndPassHatK(t *testing.T) {
	t.Parallel()
	tests := []struct {
		c      int
		at     [4]float64 // k = 1..4
		hat    [4]float64
		reason string
	}{
		{0, [4]float64{0, 0, 0, 0}, [4]float64{0, 0, 0, 0}, "no pass"},
		{1, [4]float64{0.25, 0.5, 0.75, 1}, [4]float64{0.25, 0, 0, 0}, "1-C(3,k)/C(4,k); C(1,k)/C(4,k)"},
		{2, [4]float64{0.5, 5.0 / 6, 1, 1}, [4]float64{0.5, 1.0 / 6, 0, 0}, "1-C(2,2)/6 = 5/6; C(2,2)/6 = 1/6"},
		{3, [4]float64{0.75, 1, 1, 1}, [4]float64{0.75, 0.5, 0.25, 0}, "C(3,2)/6 = 1/2; C(3,3)/4 = 1/4"},
		{4, [4]float64{1, 1, 1, 1}, [4]float64{1, 1, 1, 1}, "every epoch passed"},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.c), func(t *testing.T) {
			t.Parallel()
			for k := 1; k <= 4; k++ {
				if got := PassAtK(4, tt.c, k); math.Abs(got-tt.at[k-1]) > 1e-12 {
					t.Errorf("PassAtK(4, %d, %d) = %v, want %v (%s)", tt.c, k, got, tt.at[k-1], tt.reason)
				}
				if got := PassHatK(4, tt.c, k); math.Abs(got-tt.hat[k-1]) > 1e-12 {
					t.Errorf("PassHatK(4, %d, %d) = %v, want %v (%s)", tt.c, k, got, tt.hat[k-1], tt.reason)
				}
			}
		})
	}
	// Large n: no overflow, and the product agrees with log-gamma.
	if got, want := PassHatK(100000, 90000, 70), math.Exp(logChoose(90000, 70)-logChoose(100000, 70)); math.Abs(got-want) > 1e-9 {
		t.Errorf("PassHatK(1e5, 9e4, 70) = %v, want %v", got, want)
	}
	if got := PassHatK(5000, 4000, 100); math.IsNaN(got) || got <= 0 || got >= 1 {
		t.Errorf("PassHatK(5000, 4000, 100) = %v, want in (0, 1)", got)
	}
}

func epochs(label string, scores ...float64) []Turn {
	var out []Turn
	for i, s := range scores {
		st := StatusScored
		if math.IsNaN(s) {
			st, s = StatusUnscored, 0
		}
		out = append(out, Turn{Label: label, Epoch: i + 1, Weight: 1, Status: st, TurnScore: s, Finalized: true})
	}
	return out
}

// TestSummarizeUnequalEpochs: a task's score is the mean over its scored
// epochs, the candidate's mean the task-weighted mean of those; pass@k and
// pass^k run to the fewest epochs any task has; flaky tasks disagree on pass.
func TestSummarizeUnequalEpochs(t *testing.T) {
	t.Parallel()
	var turns []Turn
	turns = append(turns, epochs("a", 1, 1, 0.5)...)                 // mean 5/6, passes 2 of 3: flaky
	turns = append(turns, epochs("b", 1, 1)...)                      // mean 1, passes 2 of 2
	turns = append(turns, epochs("c", 0.2, math.NaN(), 0.4, 0.6)...) // mean 0.4 over 3 scored, 0 of 4 pass
	for i := range turns {
		if turns[i].Label == "b" {
			turns[i].Weight = 2
		}
	}
	got := Summarize("x", turns, Thresholds{MinPassHatK: &PassHatGate{K: 2, Value: 0.5}})
	if want := (5.0/6 + 2*1 + 0.4) / 4; math.Abs(got.MeanScore-want) > 1e-12 {
		t.Errorf("mean_score = %v, want %v", got.MeanScore, want)
	}
	if got.N != 9 || got.Unscored != 1 || got.Epochs != 4 || got.EpochsMin != 2 {
		t.Errorf("n %d unscored %d epochs %d..%d, want 9, 1, 2..4", got.N, got.Unscored, got.EpochsMin, got.Epochs)
	}
	wantAt := map[string]float64{"1": (2.0/3 + 1 + 0) / 3, "2": 2.0 / 3}              // a: 1-C(1,2)/C(3,2) = 1
	wantHat := map[string]float64{"1": (2.0/3 + 1 + 0) / 3, "2": (1.0/3 + 1 + 0) / 3} // a: C(2,2)/C(3,2) = 1/3
	if diff := cmp.Diff(wantAt, got.PassAtK, approx); diff != "" {
		t.Errorf("pass_at_k (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantHat, got.PassHatK, approx); diff != "" {
		t.Errorf("pass_hat_k (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a"}, got.FlakyTasks); diff != "" {
		t.Errorf("flaky_tasks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]GateFailure{{Gate: GateMinPassHatK, Value: 4.0 / 9, Threshold: 0.5}, {Gate: GateUnscored, Value: 1}}, got.Gates.Failed, approx); diff != "" {
		t.Errorf("gates (-want +got):\n%s", diff)
	}
}

// TestMinPassHatKGate: the gate is inclusive; a k beyond the epochs run
// fails it, saying so.
func TestMinPassHatKGate(t *testing.T) {
	t.Parallel()
	turns := append(epochs("a", 1, 1, 1, 0), epochs("b", 1, 1, 1, 1)...) // pass^2 = (C(3,2)/6 + 1)/2 = 0.75
	tests := []struct {
		name string
		gate PassHatGate
		fail bool
		note bool
	}{
		{"at the value", PassHatGate{K: 2, Value: 0.75}, false, false},
		{"below the value", PassHatGate{K: 2, Value: 0.76}, true, false},
		{"k beyond the epochs", PassHatGate{K: 5, Value: 0}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := tt.gate
			got := Summarize("x", turns, Thresholds{MinPassHatK: &g})
			if got.Gates.Passed == tt.fail || (len(got.Gates.Notes) > 0) != tt.note {
				t.Errorf("Summarize(min_pass_hat_k %+v).Gates = %+v, want failed %v, note %v", g, got.Gates, tt.fail, tt.note)
			}
		})
	}
}

// TestPassThreshold: a scored turn passes at or above pass_threshold.
func TestPassThreshold(t *testing.T) {
	t.Parallel()
	turns := epochs("a", 0.8, 0.7, 1)
	if got := Summarize("x", turns, Thresholds{}); got.PassHatK["1"] != 1.0/3 {
		t.Errorf("default threshold 1.0: pass^1 = %v, want 1/3", got.PassHatK["1"])
	}
	th := 0.8
	if got := Summarize("x", turns, Thresholds{PassThreshold: &th}); math.Abs(got.PassHatK["1"]-2.0/3) > 1e-12 {
		t.Errorf("threshold 0.8: pass^1 = %v, want 2/3", got.PassHatK["1"])
	}
}

// TestBootstrapReproducible: the same samples and seed give the same
// interval; another seed may not; the interval holds the mean.
func TestBootstrapReproducible(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	s := make([]Sample, 40)
	for i := range s {
		s[i] = Sample{Value: rng.Float64(), Weight: 1 + float64(i%3)}
	}
	a, b := Bootstrap(s, 0, DefaultSeed), Bootstrap(s, 0, DefaultSeed)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("Bootstrap twice with one seed differs:\n%s", diff)
	}
	if m := WeightedMean(s); a[0] > m || a[1] < m || a[0] >= a[1] {
		t.Errorf("Bootstrap = %v, want an interval around the mean %v", a, m)
	}
	if c := Bootstrap(s, 0, 7); cmp.Equal(a, c) {
		t.Errorf("Bootstrap with seeds %d and 7 gave the same interval %v", DefaultSeed, a)
	}
	if got := Bootstrap(nil, 0, 1); got != nil {
		t.Errorf("Bootstrap(nil) = %v, want nil", got)
	}
	if got := Bootstrap([]Sample{{Value: 0.3}}, 0, 1); !cmp.Equal(got, []float64{0.3, 0.3}) {
		t.Errorf("Bootstrap(one task) = %v, want [0.3 0.3]", got)
	}
}

// TestBootstrapIdenticalValues: when every task has the same value and
// weight, Bootstrap's shortcut gives the interval drawing every resample
// gives, bit for bit, for sizes whose sums round (0.1, 1/3) and for
// values 0 and -0 mixed (not identical: drawn in full).
func TestBootstrapIdenticalValues(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3, 7, 100, 1001} {
		for _, v := range []float64{0, math.Copysign(0, -1), 0.1, 1.0 / 3, 0.9125, 1, -2.5e-7} {
			for _, w := range []float64{0, 1, 2.5} {
				s := make([]Sample, n)
				values := make([]float64, n)
				tasks := make([]weighted, n)
				for i := range s {
					s[i] = Sample{Value: v, Weight: w}
					values[i] = v
					tw := weightOf(w)
					tasks[i] = weighted{w: tw, wv: tw * v}
				}
				got := Bootstrap(s, 500, 9)
				want := interval(tasks, values, 500, 9)
				if diff := cmp.Diff(want, got); diff != "" || math.Signbit(got[0]) != math.Signbit(want[0]) {
					t.Errorf("n=%d v=%v w=%v: Bootstrap = %v, drawn in full %v", n, v, w, got, want)
				}
			}
		}
	}
	mixed := []Sample{{Value: 0}, {Value: math.Copysign(0, -1)}, {Value: 0}}
	if identical([]float64{0, math.Copysign(0, -1)}) {
		t.Errorf("identical(0, -0) = true, want false")
	}
	if got := Bootstrap(mixed, 100, 1); !cmp.Equal(got, []float64{0, 0}) {
		t.Errorf("Bootstrap(0, -0, 0) = %v, want [0 0]", got)
	}
}

// TestBootstrapCoverage: in a simulation the 95% interval covers the true
// mean in about 95% of the runs (at least 90% of 200).
func TestBootstrapCoverage(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	const runs, tasks, trueMean = 200, 60, 0.6
	covered := 0
	for r := 0; r < runs; r++ {
		s := make([]Sample, tasks)
		for i := range s {
			if rng.Float64() < trueMean {
				s[i].Value = 1
			}
		}
		ci := Bootstrap(s, 2000, uint64(r))
		if ci[0] <= trueMean && trueMean <= ci[1] {
			covered++
		}
	}
	if covered < runs*90/100 {
		t.Errorf("the interval covered the true mean in %d of %d runs, want at least 90%%", covered, runs)
	}
}

// TestPairedRegression: two candidates with the same mean paired delta
// (-0.1): one whose every task fell is a regression; one with a single
// task that fell a lot and others unchanged is not, its interval reaching 0.
func TestPairedRegression(t *testing.T) {
	t.Parallel()
	base := map[string]Sample{}
	steady, noisy := map[string]Sample{}, map[string]Sample{}
	for i := 0; i < 10; i++ {
		l := "t" + strconv.Itoa(i)
		base[l] = Sample{Value: 0.9, Weight: 1}
		steady[l] = Sample{Value: 0.8, Weight: 1}
		noisy[l] = Sample{Value: 0.9, Weight: 1}
	}
	noisy["t0"] = Sample{Value: -0.1, Weight: 1}
	s := Compare("base", steady, base, 0, 0, DefaultSeed)
	n := Compare("base", noisy, base, 0, 0, DefaultSeed)
	if math.Abs(s.MeanDelta+0.1) > 1e-12 || math.Abs(n.MeanDelta+0.1) > 1e-12 {
		t.Fatalf("mean deltas %v and %v, want -0.1 both", s.MeanDelta, n.MeanDelta)
	}
	if !s.Regression || s.Tasks != 10 {
		t.Errorf("Compare(every task down 0.1) = %+v, want a regression over 10 tasks", s)
	}
	if n.Regression {
		t.Errorf("Compare(one task down 1.0) = %+v, want no regression (the interval reaches 0)", n)
	}
	// A min delta wider than the fall: not a regression.
	if w := Compare("base", steady, base, 0.1, 0, DefaultSeed); w.Regression {
		t.Errorf("Compare(min delta 0.1) = %+v, want no regression (interval [-0.1,-0.1] is not below -0.1)", w)
	}
	// Only shared tasks are compared.
	delete(steady, "t9")
	if got := Compare("base", steady, base, 0, 0, 1); got.Tasks != 9 {
		t.Errorf("Compare(9 shared tasks).Tasks = %d, want 9", got.Tasks)
	}
}

// BenchmarkBootstrap: 10,000 tasks, 10,000 resamples, at most 1 s
// (docs/scoring.md): equal task weights, and unequal ones.
func BenchmarkBootstrap(b *testing.B) {
	for _, weighted := range []bool{false, true} {
		name := "equal_weights"
		if weighted {
			name = "task_weights"
		}
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(5, 6))
			s := make([]Sample, 10000)
			for i := range s {
				s[i] = Sample{Value: rng.Float64(), Weight: 1}
				if weighted {
					s[i].Weight = 1 + float64(i%4)/4
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				Bootstrap(s, DefaultResamples, DefaultSeed)
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/bootstrap")
		})
	}
}
