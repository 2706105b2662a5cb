package pluginhost

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/assay-eval/assay/pkg/batchrun"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/pkg/scorerpb"
)

// proc keeps one long-lived plugin process for a manifest entry, launching
// it on first use and relaunching it with backoff after it breaks.
type proc struct {
	h      *Host
	entry  Entry
	logger hclog.Logger

	mu       sync.Mutex // held while launching
	in       *instance
	gen      uint64 // bumped at every launch
	failures int    // consecutive failures, for the backoff
	lastFail time.Time
	fatal    error // a sha256 or describe mismatch: never launched again
}

// get returns the running instance, launching it (after the backoff when it
// broke before) if there is none.
func (p *proc) get(ctx context.Context) (*instance, uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fatal != nil {
		return nil, 0, p.fatal
	}
	if p.in != nil && !p.in.client.Exited() {
		return p.in, p.gen, nil
	}
	if p.in != nil {
		p.logger.Warn("plugin exited; relaunching")
		p.in.kill()
		p.in = nil
		p.noteFailure()
	}
	if p.failures > 0 {
		wait := p.backoff() - time.Since(p.lastFail)
		if wait > 0 {
			p.logger.Info("waiting before relaunch", logBackoff, wait.String(), logAttempt, p.failures+1)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, 0, ctx.Err()
			case <-t.C:
			}
		}
	}
	sum, err := hex.DecodeString(p.entry.SHA256)
	if err != nil || len(sum) != 32 {
		p.fatal = fmt.Errorf("plugin %s: %w: manifest sha256 %q is not 64 hex digits", p.entry.ID, ErrChecksum, p.entry.SHA256)
		return nil, 0, p.fatal
	}
	path := p.h.m.BinaryPath(p.entry)
	p.logger.Debug("launching plugin", logPath, path)
	in, err := launch(ctx, launchConfig{
		path: path, sum: sum, logger: p.logger,
		startTimeout: p.h.startTimeout, callTimeout: p.h.callTimeout,
	})
	if err == nil {
		if err = agree(p.entry, in.desc); err != nil {
			in.kill()
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		err = fmt.Errorf("plugin %s: %w", p.entry.ID, err)
		if permanent(err) {
			p.fatal = err
		}
		p.noteFailure()
		p.logger.Error("plugin did not start", logError, err)
		return nil, 0, err
	}
	p.in = in
	p.gen++
	return in, p.gen, nil
}

func (p *proc) noteFailure() {
	p.failures++
	p.lastFail = time.Now()
}

func (p *proc) backoff() time.Duration {
	d := float64(p.h.backoff) * math.Pow(2, float64(p.failures-1))
	return time.Duration(min(d, float64(MaxBackoff)))
}

// broke kills instance generation gen after a failed call (unless it was
// already replaced) so that the next call relaunches it.
func (p *proc) broke(gen uint64, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.in == nil || p.gen != gen {
		return
	}
	p.logger.Error("plugin broke; killing it", logError, err)
	p.in.kill()
	p.in = nil
	p.noteFailure()
}

func (p *proc) ok() {
	p.mu.Lock()
	p.failures = 0
	p.mu.Unlock()
}

func (p *proc) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.in != nil {
		in := p.in
		p.in = nil
		in.client.Kill()
	}
}

// score sends one batch. The error is set when the whole call failed (the
// plugin could not start, died, hung past the deadline or answered
// garbage); per-case failures are in the outcomes.
func (p *proc) score(ctx context.Context, cases []*scorer.Case) ([]batchrun.Outcome, error) {
	in, gen, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	req, err := scorerpb.EncodeScoreRequest(cases)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", p.entry.ID, err)
	}
	cctx, cancel := context.WithTimeout(ctx, p.h.callTimeout)
	defer cancel()
	resp, err := in.rpc.Score(cctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(cctx.Err(), context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded {
			err = fmt.Errorf("plugin %s: %w: no answer within %v", p.entry.ID, ErrCrashed, p.h.callTimeout)
		} else {
			err = fmt.Errorf("plugin %s: %w: %v", p.entry.ID, ErrCrashed, err)
		}
		p.broke(gen, err)
		return nil, err
	}
	outs, err := p.decode(cases, resp)
	if err != nil {
		err = fmt.Errorf("plugin %s: %w: %v", p.entry.ID, ErrCrashed, err)
		p.broke(gen, err)
		return nil, err
	}
	p.ok()
	return outs, nil
}

func (p *proc) decode(cases []*scorer.Case, resp *scorerpb.ScoreResponse) ([]batchrun.Outcome, error) {
	res := resp.GetResults()
	if len(res) != len(cases) {
		return nil, fmt.Errorf("%d results for %d cases", len(res), len(cases))
	}
	outs := make([]batchrun.Outcome, len(cases))
	for i, r := range res {
		if r.GetCaseId() != cases[i].ID {
			return nil, fmt.Errorf("result %d is for case %q, want %q", i, r.GetCaseId(), cases[i].ID)
		}
		sr, err := scorerpb.ResultFromProto(r)
		if err == nil {
			err = batchrun.ValidateResult(sr)
		}
		if err != nil {
			outs[i] = batchrun.Outcome{Err: fmt.Errorf("plugin %s: %w", p.entry.ID, err)}
			continue
		}
		outs[i] = batchrun.Outcome{Result: sr}
	}
	return outs, nil
}
