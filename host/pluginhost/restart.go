package pluginhost

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/sdk/batchrun"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// proc keeps one plugin process for a manifest entry, launching it on first
// use and relaunching it after it breaks. The host's shared proc of a
// scorer has many calls in flight; a solo proc (see solo in isolate.go)
// has one at a time, so a death on it is the fault of the call it ran.
type proc struct {
	h      *Host
	entry  Entry
	logger hclog.Logger

	mu       sync.Mutex // held while launching
	in       *instance
	gen      uint64 // bumped at every launch
	failures int    // consecutive failed launches, for the backoff
	lastFail time.Time
	fatal    error // a sha256 or describe mismatch: never launched again

	perCase atomic.Int64 // bytes a case took on the wire in the last batch: the next buffer's size
}

// get returns the running instance, launching it if there is none. A
// process that died is relaunched at once (the call it died on answers for
// it); only a launch that failed makes the next one wait, with a backoff
// that doubles up to MaxBackoff.
func (p *proc) get(ctx context.Context) (*instance, uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fatal != nil {
		return nil, 0, p.fatal
	}
	if p.h.isClosed() {
		return nil, 0, ErrClosed
	}
	if p.in != nil && !p.in.client.Exited() {
		return p.in, p.gen, nil
	}
	if p.in != nil {
		p.logger.Warn("plugin exited; relaunching")
		p.in.kill()
		p.in = nil
	}
	if err := p.wait(ctx); err != nil {
		return nil, 0, err
	}
	sum, err := hex.DecodeString(p.entry.SHA256)
	if err != nil || len(sum) != 32 {
		p.fatal = fmt.Errorf("plugin %s: %w: manifest sha256 %q is not 64 hex digits", p.entry.ID, ErrChecksum, p.entry.SHA256)
		return nil, 0, p.fatal
	}
	path, err := p.h.m.Binary(p.entry)
	if err != nil {
		p.fatal = err
		return nil, 0, p.fatal
	}
	sockets, err := p.h.socketDir()
	if err != nil {
		p.fatal = fmt.Errorf("plugin %s: %w", p.entry.ID, err)
		return nil, 0, p.fatal
	}
	p.logger.Debug("launching plugin", logPath, path)
	in, err := launch(ctx, launchConfig{
		path: path, sum: sum, limits: p.h.limits, logger: p.logger,
		startTimeout: p.h.startTimeout, callTimeout: p.h.deadline(1), socketDir: sockets,
		tls: p.h.needsTLS(p.entry.ID),
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
		if permanent(err) {
			p.fatal = fmt.Errorf("plugin %s: %w", p.entry.ID, err)
			return nil, 0, p.fatal
		}
		p.failures++
		p.lastFail = time.Now()
		p.logger.Error("plugin did not start", logError, err)
		return nil, 0, fmt.Errorf("plugin %s: %w: %w", p.entry.ID, ErrStart, err)
	}
	if in.tls {
		p.h.noteTLS(p.entry.ID)
	}
	p.failures = 0
	p.in = in
	p.gen++
	return in, p.gen, nil
}

// wait sleeps out the backoff after failed launches.
func (p *proc) wait(ctx context.Context) error {
	if p.failures == 0 {
		return nil
	}
	d := float64(p.h.backoff) * math.Pow(2, float64(p.failures-1))
	wait := time.Duration(min(d, float64(MaxBackoff))) - time.Since(p.lastFail)
	if wait <= 0 {
		return nil
	}
	p.logger.Info("waiting before relaunch", logBackoff, wait.String(), logAttempt, p.failures+1)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
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

// score sends one batch under the deadline for its size. The error is set
// when the whole call failed (the plugin could not start, died, hung past
// the deadline or answered garbage; a hung or garbled process is killed);
// per-case failures are in the outcomes.
func (p *proc) score(ctx context.Context, cases []*scorer.Case) ([]batchrun.Outcome, error) {
	in, gen, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	req := scorerpb.NewRawMessage(int(p.perCase.Load()) * (len(cases) + 1))
	// Of the tool calls' arguments only those the running binary says it
	// reads (sdk.KPI.ArgsRead; docs/protocol.md, "Needs").
	req.B, err = scorerpb.MarshalCasesFor(req.B, in.desc, cases)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", p.entry.ID, err)
	}
	// The answer is read by scorerpb.UnmarshalResults, which reads
	// evidence sent as a reference to an earlier check's
	// (docs/protocol.md, "Performance").
	req.B = scorerpb.AppendRequestOptions(req.B, scorerpb.RequestOptions{ReadsEvidenceFrom: true})
	p.perCase.Store(int64(len(req.B) / max(len(cases), 1)))
	deadline := p.h.deadline(len(cases))
	cctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	resp, err := in.rpc.scoreRaw(cctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(cctx.Err(), context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded {
			err = fmt.Errorf("%w; the process was killed", p.h.deadlineError("plugin "+string(p.entry.ID), len(cases)))
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
	return outs, nil
}

func (p *proc) decode(cases []*scorer.Case, res []scorerpb.WireResult) ([]batchrun.Outcome, error) {
	if err := scorerpb.CheckWireResults(cases, res); err != nil {
		return nil, err
	}
	outs := make([]batchrun.Outcome, len(cases))
	for i, r := range res {
		err := r.Err
		if err == nil {
			err = batchrun.ValidateResult(r.Result)
		}
		if err != nil {
			outs[i] = batchrun.Outcome{Err: fmt.Errorf("plugin %s: %w", p.entry.ID, err)}
			continue
		}
		outs[i] = batchrun.Outcome{Result: r.Result}
	}
	return outs, nil
}
