package pluginhost

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/assay-eval/assay/pkg/batchrun"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/pkg/scorerpb"
)

// Defaults for the Host's timeouts and restart backoff.
const (
	DefaultCallTimeout  = 30 * time.Second
	DefaultStartTimeout = 10 * time.Second
	DefaultBackoff      = 100 * time.Millisecond
	MaxBackoff          = 5 * time.Second
)

// Host runs the scorers of a manifest. It is safe for concurrent use: many
// batches may be in flight to one plugin.
type Host struct {
	m            *Manifest
	logger       hclog.Logger
	callTimeout  time.Duration
	startTimeout time.Duration
	backoff      time.Duration
	inProcess    map[scorer.ID]batchrun.Scorer

	mu     sync.Mutex
	procs  map[scorer.ID]*proc
	closed bool
}

// Option configures a Host.
type Option func(*Host)

// WithLogger sets the host's logger; each plugin logs under its id.
func WithLogger(l hclog.Logger) Option { return func(h *Host) { h.logger = l } }

// WithCallTimeout sets the deadline of every call to a plugin.
func WithCallTimeout(d time.Duration) Option { return func(h *Host) { h.callTimeout = d } }

// WithStartTimeout sets how long a plugin may take to complete the handshake.
func WithStartTimeout(d time.Duration) Option { return func(h *Host) { h.startTimeout = d } }

// WithRestartBackoff sets the first wait before relaunching a broken
// plugin; it doubles with each further failure up to MaxBackoff.
func WithRestartBackoff(d time.Duration) Option { return func(h *Host) { h.backoff = d } }

// WithInProcess serves these scorers inside the host (the batch runner a
// plugin runs, package batchrun, without RPC) instead of launching their
// plugins. Any sdk.Scorer is a batchrun.Scorer.
func WithInProcess(scorers ...batchrun.Scorer) Option {
	return func(h *Host) {
		for _, s := range scorers {
			h.inProcess[s.Describe().ID] = s
		}
	}
}

// New returns a Host for the manifest's plugins. Plugins are launched on
// first use.
func New(m *Manifest, opts ...Option) *Host {
	h := &Host{
		m:            m,
		logger:       hclog.NewNullLogger(),
		callTimeout:  DefaultCallTimeout,
		startTimeout: DefaultStartTimeout,
		backoff:      DefaultBackoff,
		inProcess:    map[scorer.ID]batchrun.Scorer{},
		procs:        map[scorer.ID]*proc{},
	}
	for _, o := range opts {
		o(h)
	}
	return h
}

// proc returns the plugin process manager for id.
func (h *Host) proc(id scorer.ID) (*proc, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	if p, ok := h.procs[id]; ok {
		return p, nil
	}
	e, ok := h.m.Lookup(id)
	if !ok {
		return nil, fmt.Errorf("%w %q: not in %s", ErrUnknownScorer, id, h.m.Path())
	}
	p := &proc{h: h, entry: e, logger: h.logger.Named(string(id))}
	h.procs[id] = p
	return p, nil
}

// Describe returns the description of scorer id as the running scorer
// gives it (launching its plugin if needed).
func (h *Host) Describe(ctx context.Context, id scorer.ID) (scorer.Description, error) {
	if s, ok := h.inProcess[id]; ok {
		return batchrun.Describe(s), nil
	}
	p, err := h.proc(id)
	if err != nil {
		return scorer.Description{}, err
	}
	in, _, err := p.get(ctx)
	if err != nil {
		return scorer.Description{}, err
	}
	return in.desc, nil
}

// Verify checks plugin id for `assay doctor`: its binary still has the
// manifest's sha256, and it launches and describes itself as the manifest
// says (id, version, KPI keys).
func (h *Host) Verify(ctx context.Context, id scorer.ID) error {
	p, err := h.proc(id)
	if err != nil {
		return err
	}
	path := h.m.BinaryPath(p.entry)
	sum, err := FileSHA256(path)
	if err != nil {
		return fmt.Errorf("verifying %s: %w", id, err)
	}
	if sum != p.entry.SHA256 {
		return fmt.Errorf("verifying %s: %s: %w: the file has %s, the manifest %s", id, path, ErrChecksum, sum, p.entry.SHA256)
	}
	if _, _, err := p.get(ctx); err != nil {
		return fmt.Errorf("verifying %s: %w", id, err)
	}
	return nil
}

// Close stops every plugin. Calls after Close fail with ErrClosed.
func (h *Host) Close() error {
	h.mu.Lock()
	procs := h.procs
	h.procs = map[scorer.ID]*proc{}
	h.closed = true
	h.mu.Unlock()
	for _, p := range procs {
		p.close()
	}
	return nil
}

// Score scores a batch of cases with scorer id and returns one outcome per
// case, in order; it never fails the whole batch. Each case is stripped to
// the parts the scorer declares. A case that fails (the plugin crashed, hung
// or answered garbage, or the scorer returned an error for it) is retried
// once, alone; if it fails again its outcome carries a *ScorerError.
func (h *Host) Score(ctx context.Context, id scorer.ID, cases []*scorer.Case) []batchrun.Outcome {
	out := make([]batchrun.Outcome, len(cases))
	if len(cases) == 0 {
		return out
	}
	fail := func(i int, err error) {
		out[i] = batchrun.Outcome{Err: &ScorerError{ID: id, Case: cases[i].ID, Err: err}}
	}

	var (
		d     scorer.Description
		batch func(ctx context.Context, cs []*scorer.Case) ([]batchrun.Outcome, error)
	)
	if s, ok := h.inProcess[id]; ok {
		d = batchrun.Describe(s)
		batch = func(ctx context.Context, cs []*scorer.Case) ([]batchrun.Outcome, error) {
			ctx, cancel := context.WithTimeout(ctx, h.callTimeout)
			defer cancel()
			return batchrun.Score(ctx, s, cs, 0), nil
		}
	} else {
		p, err := h.proc(id)
		if err != nil {
			for i := range cases {
				fail(i, err)
			}
			return out
		}
		d = p.entry.Description()
		batch = p.score
	}

	sent := make([]*scorer.Case, len(cases))
	for i, c := range cases {
		sent[i] = scorerpb.StripCase(d, c)
	}

	// First attempt: the whole batch at once.
	var retry []int
	outs, err := batch(ctx, sent)
	for i := range cases {
		switch {
		case err != nil:
			out[i] = batchrun.Outcome{Err: err}
			retry = append(retry, i)
		case outs[i].Err != nil:
			out[i] = outs[i]
			retry = append(retry, i)
		default:
			out[i] = outs[i]
		}
	}
	if len(retry) == 0 {
		return out
	}
	h.logger.Warn("retrying cases", logPlugin, id, logCases, len(retry), logError, firstErr(out, retry))

	// Second attempt: each failed case alone, so one bad case cannot sink
	// the others. A plugin that keeps breaking gives up the rest.
	const giveUp = 3
	broken := 0
	for _, i := range retry {
		if ctx.Err() != nil || broken >= giveUp || permanent(out[i].Err) {
			fail(i, out[i].Err)
			continue
		}
		outs, err := batch(ctx, sent[i:i+1])
		switch {
		case err != nil:
			broken++
			fail(i, err)
		case outs[0].Err != nil:
			broken = 0
			fail(i, outs[0].Err)
		default:
			broken = 0
			out[i] = outs[0]
		}
	}
	return out
}

func firstErr(out []batchrun.Outcome, idx []int) error {
	for _, i := range idx {
		if out[i].Err != nil {
			return out[i].Err
		}
	}
	return nil
}
