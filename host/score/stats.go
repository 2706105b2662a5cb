package score

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
)

// Bootstrap defaults (docs/scoring.md, "Epochs and statistics").
const (
	// DefaultResamples is the number of bootstrap resamples.
	DefaultResamples = 10000
	// DefaultSeed seeds the bootstrap when the caller gives no seed.
	DefaultSeed uint64 = 19
	// DefaultPassThreshold is the turn score a turn needs to pass.
	DefaultPassThreshold = 1.0
)

// TaskEpochs is one task's outcome over its epochs, as the statistics read
// it.
type TaskEpochs struct {
	Label  string
	Weight float64   // a non-positive weight counts as 1
	Scores []float64 // the turn score of each scored epoch
	Ran    int       // epochs that ran (scored and unscored)
	Passed int       // epochs that passed (scored, turn score >= the pass threshold)
}

// Mean is the task's score: the mean over its scored epochs; ok is false
// when none was scored.
func (t TaskEpochs) Mean() (float64, bool) {
	if len(t.Scores) == 0 {
		return 0, false
	}
	var s float64
	for _, x := range t.Scores {
		s += x
	}
	return s / float64(len(t.Scores)), true
}

func weightOf(w float64) float64 {
	if w <= 0 {
		return 1
	}
	return w
}

// logChoose is ln C(n, k) by log-gamma, exact enough for any n an
// evaluation has; C(n, k) with k > n is 0 (-Inf).
func logChoose(n, k int) float64 {
	if k < 0 || k > n {
		return math.Inf(-1)
	}
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// chooseRatio is C(a, k) / C(n, k) for a <= n, computed as the product
// Π_{i<k} (a-i)/(n-i), which never overflows; for large k it uses
// log-gamma.
func chooseRatio(a, n, k int) float64 {
	if k > a {
		return 0
	}
	if k <= 64 {
		r := 1.0
		for i := 0; i < k; i++ {
			r *= float64(a-i) / float64(n-i)
		}
		return r
	}
	return math.Exp(logChoose(a, k) - logChoose(n, k))
}

// PassAtK is 1 - C(n-c, k)/C(n, k): the chance that at least one of k
// epochs drawn without replacement from n, c of which passed, passes.
func PassAtK(n, c, k int) float64 {
	if k < 1 || k > n {
		return math.NaN()
	}
	return 1 - chooseRatio(n-c, n, k)
}

// PassHatK is C(c, k)/C(n, k) (τ-bench's pass^k): the chance that all k
// epochs drawn without replacement from n, c of which passed, pass.
func PassHatK(n, c, k int) float64 {
	if k < 1 || k > n {
		return math.NaN()
	}
	return chooseRatio(c, n, k)
}

// Reliability is a candidate's pass@k and pass^k for k = 1 .. the smallest
// number of epochs any task that ran has, each the unweighted mean over the
// tasks that ran, keyed by k as a string; and the tasks whose epochs
// disagree on pass, sorted. Tasks with no epoch that ran are left out.
type Reliability struct {
	MinEpochs int
	MaxEpochs int
	PassAtK   map[string]float64
	PassHatK  map[string]float64
	Flaky     []string
}

// Reliable computes the Reliability of a candidate's tasks.
func Reliable(tasks []TaskEpochs) Reliability {
	r := Reliability{PassAtK: map[string]float64{}, PassHatK: map[string]float64{}, Flaky: []string{}}
	var ran []TaskEpochs
	for _, t := range tasks {
		if t.Ran == 0 {
			continue
		}
		ran = append(ran, t)
		if r.MinEpochs == 0 || t.Ran < r.MinEpochs {
			r.MinEpochs = t.Ran
		}
		r.MaxEpochs = max(r.MaxEpochs, t.Ran)
		if t.Passed > 0 && t.Passed < t.Ran {
			r.Flaky = append(r.Flaky, t.Label)
		}
	}
	slices.Sort(r.Flaky)
	for k := 1; k <= r.MinEpochs; k++ {
		var at, hat float64
		for _, t := range ran {
			at += PassAtK(t.Ran, t.Passed, k)
			hat += PassHatK(t.Ran, t.Passed, k)
		}
		key := strconv.Itoa(k)
		r.PassAtK[key] = at / float64(len(ran))
		r.PassHatK[key] = hat / float64(len(ran))
	}
	return r
}

// Sample is one task's value in a bootstrap: its score (or paired delta)
// and its weight.
type Sample struct {
	Value  float64
	Weight float64
}

// WeightedMean is the weighted mean of the samples (0 when there are none).
func WeightedMean(s []Sample) float64 {
	var ws, w float64
	for _, x := range s {
		ww := weightOf(x.Weight)
		ws += ww * x.Value
		w += ww
	}
	if w == 0 {
		return 0
	}
	return ws / w
}

// Bootstrap is the 95% percentile bootstrap interval of the weighted mean
// of samples: B = resamples times, draw len(samples) tasks with
// replacement and take their weighted mean; the interval is the
// (⌊0.025·B⌋+1)-th and ⌈0.975·B⌉-th smallest of the B means. The resamples
// are drawn in bootstrapBlocks blocks, block i from a PCG generator seeded
// (seed, i), so the same samples, resamples and seed give the same interval
// on every platform and with any number of cores. nil when there are no
// samples; resamples <= 0 means DefaultResamples.
func Bootstrap(samples []Sample, resamples int, seed uint64) []float64 {
	n := len(samples)
	if n == 0 {
		return nil
	}
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	tasks := make([]weighted, n)
	uniform := true
	for i, s := range samples {
		w := weightOf(s.Weight)
		tasks[i] = weighted{w: w, wv: w * s.Value}
		uniform = uniform && w == tasks[0].w
	}
	var values []float64
	if uniform {
		values = make([]float64, n)
		for i, s := range samples {
			values[i] = s.Value
		}
	}
	if uniform && identical(values) {
		// Every draw takes the same value, so every resample adds the same
		// numbers in the same order: one resample is all of them, bit for
		// bit (TestBootstrapIdenticalValues).
		m := resampleUniform(rand.NewPCG(seed, 0), values)
		return []float64{m, m}
	}
	return interval(tasks, values, resamples, seed)
}

// interval is Bootstrap's interval drawn in full: values when the weights
// are uniform, else tasks.
func interval(tasks []weighted, values []float64, resamples int, seed uint64) []float64 {
	uniform := values != nil
	means := make([]float64, resamples)
	per := (resamples + bootstrapBlocks - 1) / bootstrapBlocks
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for blk := 0; blk*per < resamples; blk++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(blk int) {
			defer wg.Done()
			defer func() { <-sem }()
			rng := rand.NewPCG(seed, uint64(blk))
			for b := blk * per; b < min((blk+1)*per, resamples); b++ {
				if uniform {
					means[b] = resampleUniform(rng, values)
				} else {
					means[b] = resampleWeighted(rng, tasks)
				}
			}
		}(blk)
	}
	wg.Wait()
	slices.Sort(means)
	lo := int(math.Floor(0.025 * float64(resamples)))
	hi := int(math.Ceil(0.975*float64(resamples))) - 1
	return []float64{means[lo], means[hi]}
}

// identical reports whether every value has the same bits (so 0 and -0,
// or two NaNs, are not taken for each other).
func identical(v []float64) bool {
	for _, x := range v {
		if math.Float64bits(x) != math.Float64bits(v[0]) {
			return false
		}
	}
	return true
}

// bootstrapBlocks is how many independent generator streams a bootstrap
// draws from: fixed, so the result does not depend on the cores.
const bootstrapBlocks = 16

type weighted struct{ w, wv float64 }

// draw2 turns one 64-bit draw into two indexes below n (multiply-shift on
// each 32-bit half).
func draw2(x, n uint64) (uint64, uint64) {
	return (x & 0xffffffff) * n >> 32, (x >> 32) * n >> 32
}

// resampleUniform is the mean of len(v) values drawn with replacement. The
// two indexes of a draw go to two sums, so the additions overlap.
func resampleUniform(rng *rand.PCG, v []float64) float64 {
	n := uint64(len(v))
	var s0, s1 float64
	i := uint64(0)
	for ; i+1 < n; i += 2 {
		j, k := draw2(rng.Uint64(), n)
		s0 += v[j]
		s1 += v[k]
	}
	if i < n {
		j, _ := draw2(rng.Uint64(), n)
		s0 += v[j]
	}
	return (s0 + s1) / float64(n)
}

// resampleWeighted is the weighted mean of len(t) tasks drawn with
// replacement, with two sums of each kind like resampleUniform.
func resampleWeighted(rng *rand.PCG, t []weighted) float64 {
	n := uint64(len(t))
	var w0, w1, v0, v1 float64
	i := uint64(0)
	for ; i+1 < n; i += 2 {
		j, k := draw2(rng.Uint64(), n)
		a, b := t[j], t[k]
		w0 += a.w
		v0 += a.wv
		w1 += b.w
		v1 += b.wv
	}
	if i < n {
		j, _ := draw2(rng.Uint64(), n)
		w0 += t[j].w
		v0 += t[j].wv
	}
	return (v0 + v1) / (w0 + w1)
}

// Overlap reports whether two intervals [lo, hi] share a point (compared at
// 9 decimals, like every score comparison).
func Overlap(a, b []float64) bool {
	if len(a) != 2 || len(b) != 2 {
		return false
	}
	return le(a[0], b[1]) && le(b[0], a[1])
}

// TaskMeans maps each task with a scored epoch to its score (the mean over
// its scored epochs) and weight.
func TaskMeans(turns []Turn) map[string]Sample {
	g := byTask(turns)
	out := make(map[string]Sample, len(g.all))
	for k := range g.all {
		t := &g.all[k]
		if m, ok := t.Mean(); ok && t.Label != "" {
			out[t.Label] = Sample{Value: m, Weight: t.Weight}
		}
	}
	return out
}

// Paired is a candidate compared with a baseline task by task
// (summary.json's candidates[].paired).
type Paired struct {
	Baseline string `json:"baseline"`
	// Tasks counts the tasks both scored; only they are compared.
	Tasks int `json:"tasks"`
	// MeanDelta is the task-weighted mean of candidate minus baseline task
	// scores; CI95 its percentile bootstrap 95% interval (null without
	// tasks).
	MeanDelta float64   `json:"mean_delta"`
	CI95      []float64 `json:"ci95"`
	// MinDelta is scoring.promotion.regression_min_delta; Regression is
	// true when the whole interval lies below -MinDelta.
	MinDelta   float64 `json:"regression_min_delta"`
	Regression bool    `json:"regression"`
}

// Compare pairs cand with base on the tasks both scored (weighted by the
// candidate's task weight) and bootstraps the mean delta.
func Compare(baseline string, cand, base map[string]Sample, minDelta float64, resamples int, seed uint64) Paired {
	labels := make([]string, 0, len(cand))
	for l := range cand {
		if _, ok := base[l]; ok {
			labels = append(labels, l)
		}
	}
	slices.Sort(labels)
	deltas := make([]Sample, len(labels))
	for i, l := range labels {
		deltas[i] = Sample{Value: cand[l].Value - base[l].Value, Weight: cand[l].Weight}
	}
	p := Paired{Baseline: baseline, Tasks: len(labels), MeanDelta: WeightedMean(deltas), MinDelta: minDelta}
	p.CI95 = Bootstrap(deltas, resamples, seed)
	p.Regression = p.CI95 != nil && !ge(p.CI95[1], -minDelta)
	return p
}
