package batchrun

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// Scorer is sdk.Scorer, named here for the host's in-process scorers.
type Scorer = sdk.Scorer

// Outcome is the answer for one case: a result, or the error that kept the
// scorer from giving one.
type Outcome struct {
	Result *sdk.Result
	Err    error
	// ScoredOnRetry says the result came from a retry: the case's batch
	// lost its plugin process (a crash or a hang) or the scorer failed the
	// case, and the host scored it again. The host sets it; a scorer never
	// does.
	ScoredOnRetry bool
}

// PanicError is a panic inside Score, recovered into that case's error.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("scorer panicked: %v", e.Value) }

// ErrNoResult is a Score that returned neither a result nor an error.
var ErrNoResult = errors.New("scorer returned no result and no error")

// Limit is the default number of cases a batch scores at once.
func Limit() int { return max(2, runtime.GOMAXPROCS(0)) }

// Describe returns s's description with the SDK's fields (SDKVersion,
// Protocols) filled in: what a plugin serving s answers to Describe.
func Describe(s Scorer) sdk.Description {
	d := s.Describe()
	d.SDKVersion = sdk.SDKVersion
	d.Protocols = []int{scorerpb.ProtocolVersion}
	return d
}

// Score scores every case with s, at most limit at a time, and returns
// one outcome per case in the same order. A panic, an error return or an
// invalid result fails only its own case. Once ctx is done, cases not yet
// started fail with ctx's error.
func Score(ctx context.Context, s Scorer, cases []*sdk.Case, limit int) []Outcome {
	out := make([]Outcome, len(cases))
	if limit <= 0 {
		limit = Limit()
	}
	if len(cases) == 1 || limit == 1 {
		for i, c := range cases {
			out[i] = scoreOne(ctx, s, c)
		}
		return out
	}
	// A few workers take the cases in turn, rather than a goroutine a
	// case: a worker's stack, once grown by a scorer, serves the next case.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(limit, len(cases)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(cases) {
					return
				}
				out[i] = scoreOne(ctx, s, cases[i])
			}
		}()
	}
	wg.Wait()
	return out
}

func scoreOne(ctx context.Context, s Scorer, c *sdk.Case) (o Outcome) {
	if err := ctx.Err(); err != nil {
		return Outcome{Err: fmt.Errorf("scoring case %q: %w", c.ID, err)}
	}
	defer func() {
		if v := recover(); v != nil {
			o = Outcome{Err: &PanicError{Value: v, Stack: debug.Stack()}}
		}
	}()
	r, err := s.Score(ctx, c)
	if err != nil {
		return Outcome{Err: err}
	}
	if r == nil {
		return Outcome{Err: ErrNoResult}
	}
	if err := ValidateResult(r); err != nil {
		return Outcome{Err: err}
	}
	return Outcome{Result: r}
}

// ValidateResult checks that a result's score and check scores are numbers
// in [0,1].
func ValidateResult(r *sdk.Result) error {
	if !unit(r.Score) {
		return fmt.Errorf("invalid result: score %v is not in [0,1]", r.Score)
	}
	for i, c := range r.Checks {
		if !unit(c.Score) {
			return fmt.Errorf("invalid result: check %d (%s) score %v is not in [0,1]", i, c.KPI, c.Score)
		}
	}
	return nil
}

func unit(x float64) bool { return !math.IsNaN(x) && x >= 0 && x <= 1 }
