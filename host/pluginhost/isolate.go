package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/sdk/batchrun"
)

// How the host isolates the cases of a lost batch (docs/plugins.md).
const (
	// CaseAttempts is how many times a case run alone may crash its process
	// before it is failed: the restart budget of one case. A case that
	// hangs alone is failed at once (it already waited a full deadline).
	CaseAttempts = 2
	// MaxBrokenStreak is how many cases in a row, each run alone, may crash
	// or hang a scorer, with no successful call in between, before the host
	// stops calling it for the rest of its life (ErrGaveUp): a plugin that
	// breaks on everything costs a bounded time, not a deadline per case.
	MaxBrokenStreak = 10
)

// caller sends one batch: one outcome per case, or an error when the whole
// call failed.
type caller func(ctx context.Context, cases []*scorer.Case) ([]batchrun.Outcome, error)

// lane is where one scorer's batches go.
type lane struct {
	desc   scorer.Description
	shared caller                  // the scorer's shared process: many calls in flight
	solo   func() (caller, func()) // a process of its own, one call at a time, and its stop
	health *health
}

// health is a scorer's breaker: the run of cases that broke it alone.
type health struct {
	id     scorer.ID
	mu     sync.Mutex
	streak int
	broken error
}

func (hl *health) check() error {
	hl.mu.Lock()
	defer hl.mu.Unlock()
	return hl.broken
}

func (hl *health) ok() {
	hl.mu.Lock()
	hl.streak = 0
	hl.mu.Unlock()
}

// failed counts a case that broke the scorer alone.
func (hl *health) failed(err error) {
	hl.mu.Lock()
	defer hl.mu.Unlock()
	hl.streak++
	if hl.streak >= MaxBrokenStreak && hl.broken == nil {
		hl.broken = fmt.Errorf("scorer %s: %w: each of the last %d cases run alone crashed or hung it, with no success in between (the last: %v); the host calls it no more in this run",
			hl.id, ErrGaveUp, hl.streak, err)
	}
}

// attempt scores one Score call's cases: the whole batch on the shared
// process, then the cases of a lost batch on a solo process (replayed, or
// one at a time).
type attempt struct {
	h     *Host
	id    scorer.ID
	l     lane
	cases []*scorer.Case
	out   []batchrun.Outcome

	soloCall caller
	stopSolo func()
	again    []int // cases the scorer failed in a successful call: tried once more alone
}

func (a *attempt) run(ctx context.Context) {
	defer func() {
		if a.stopSolo != nil {
			a.stopSolo()
		}
	}()
	all := make([]int, len(a.cases))
	for i := range all {
		all[i] = i
	}
	if err := a.l.health.check(); err != nil {
		a.failAll(all, err)
		return
	}
	outs, err := a.l.shared(ctx, a.cases)
	switch {
	case err == nil:
		a.l.health.ok()
		a.record(all, outs)
	case final(ctx, err):
		a.failAll(all, err)
	case errors.Is(err, ErrDeadline):
		a.h.logger.Warn("batch timed out; running its cases one at a time", logPlugin, a.id, logCases, len(all), logError, err)
		for _, i := range all {
			a.alone(ctx, i)
		}
	default:
		a.h.logger.Warn("batch lost; replaying it on a process of its own", logPlugin, a.id, logCases, len(all), logError, err)
		a.replay(ctx, all)
	}
	if len(a.again) > 0 {
		a.h.logger.Warn("retrying failed cases alone", logPlugin, a.id, logCases, len(a.again))
	}
	for _, i := range a.again {
		a.alone(ctx, i)
	}
}

// record keeps the outcomes of a successful call of cases idx; a case the
// scorer failed is kept failed and queued to be tried once more alone.
func (a *attempt) record(idx []int, outs []batchrun.Outcome) {
	for k, i := range idx {
		if outs[k].Err != nil {
			a.fail(i, outs[k].Err)
			a.again = append(a.again, i)
			continue
		}
		a.out[i] = outs[k]
	}
}

func (a *attempt) fail(i int, err error) {
	a.out[i] = batchrun.Outcome{Err: &ScorerError{ID: a.id, Case: a.cases[i].ID, Err: err}}
}

func (a *attempt) failAll(idx []int, err error) {
	for _, i := range idx {
		a.fail(i, err)
	}
}

// solo calls the attempt's solo process, starting it on first use.
func (a *attempt) solo(ctx context.Context, idx []int) ([]batchrun.Outcome, error) {
	if err := a.l.health.check(); err != nil {
		return nil, err
	}
	if a.soloCall == nil {
		a.soloCall, a.stopSolo = a.l.solo()
	}
	cs := make([]*scorer.Case, len(idx))
	for k, i := range idx {
		cs[k] = a.cases[i]
	}
	return a.soloCall(ctx, cs)
}

// replay runs the cases idx of a batch that crashed on the solo process:
// all of them once more (a batch that lost only because another batch's
// case killed the shared process scores here), then, if the solo process
// breaks too, each case alone. A process on which one call runs at a time
// breaks for that call's cases only. Running the cases alone costs a call
// per case but a relaunch only per crash, where bisecting would relaunch at
// every level of the search.
func (a *attempt) replay(ctx context.Context, idx []int) {
	outs, err := a.solo(ctx, idx)
	switch {
	case err == nil:
		a.l.health.ok()
		a.record(idx, outs)
		for _, i := range idx {
			a.note(i, "retried: its batch lost the plugin process, and the batch was scored again on a fresh one")
		}
	case final(ctx, err):
		a.failAll(idx, err)
	default:
		for _, i := range idx {
			a.alone(ctx, i)
		}
	}
}

// note says on a case's result that it came from a retry (nothing a retry
// produced passes as a first answer): the outcome is marked ScoredOnRetry, which
// verify counts (scored_on_retry), and the note reaches the turn's
// diagnostics in results.json and the database.
func (a *attempt) note(i int, why string) {
	if r := a.out[i].Result; a.out[i].Err == nil && r != nil {
		a.out[i].ScoredOnRetry = true
		r.Diagnostics = append(r.Diagnostics, "host: "+why)
	}
}

// alone runs case i by itself on the solo process. A crash is retried on a
// fresh process until the case has used its CaseAttempts; a hang is not.
// Its outcome is final.
func (a *attempt) alone(ctx context.Context, i int) {
	var err error
	n := 0
	for n < CaseAttempts {
		n++
		var outs []batchrun.Outcome
		outs, err = a.solo(ctx, []int{i})
		if err == nil {
			a.l.health.ok()
			a.out[i] = outs[0]
			if outs[0].Err != nil {
				a.fail(i, outs[0].Err)
			}
			a.note(i, fmt.Sprintf("retried: scored alone on a fresh plugin process (attempt %d) after its batch failed", n))
			return
		}
		if final(ctx, err) {
			a.fail(i, err)
			return
		}
		if errors.Is(err, ErrDeadline) {
			break
		}
	}
	a.l.health.failed(err)
	a.fail(i, fmt.Errorf("run alone %d time(s): %w", n, err))
}
