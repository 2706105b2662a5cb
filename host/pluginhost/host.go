package pluginhost

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/sdk/batchrun"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// Defaults for the Host's timeouts and restart backoff.
const (
	// DefaultCallTimeout is the base D of a call's deadline: a call of n
	// cases may take D + n×D/20 (2.1s for one case, 8.4s for 64).
	DefaultCallTimeout  = 2 * time.Second
	DefaultStartTimeout = 10 * time.Second
	DefaultBackoff      = 100 * time.Millisecond
	MaxBackoff          = 5 * time.Second
)

// PerCaseShare is how much of the base deadline each case of a call adds:
// a call of n cases gets D + n×D/PerCaseShare.
const PerCaseShare = 20

// Host runs the scorers of a manifest. It is safe for concurrent use: many
// batches may be in flight to one plugin.
type Host struct {
	m            *Manifest
	logger       hclog.Logger
	callTimeout  time.Duration
	startTimeout time.Duration
	backoff      time.Duration
	inProcess    map[scorer.ID]batchrun.Scorer
	limits       Limits

	mu      sync.Mutex
	procs   map[scorer.ID]*proc
	solos   map[*proc]bool // the solo processes of lost batches being isolated
	healths map[scorer.ID]*health
	closed  bool
	sockets *scorerpb.SocketDir // the run's private socket directory; nil until the first launch
	tls     map[scorer.ID]bool  // the scorers that started only with AutoMTLS: later launches use it at once
	warned  []string            // the run's warnings (Warnings)
}

// Option configures a Host.
type Option func(*Host)

// WithLogger sets the host's logger; each plugin logs under its id.
func WithLogger(l hclog.Logger) Option { return func(h *Host) { h.logger = l } }

// WithCallTimeout sets the base D of every call's deadline: a call of n
// cases may take D + n×D/PerCaseShare (default DefaultCallTimeout).
// Describe at launch gets the deadline of one case.
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
		limits:       DefaultLimits(),
		procs:        map[scorer.ID]*proc{},
		solos:        map[*proc]bool{},
		healths:      map[scorer.ID]*health{},
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

// deadline is how long a call of n cases may take.
func (h *Host) deadline(n int) time.Duration {
	return h.callTimeout + time.Duration(n)*h.callTimeout/PerCaseShare
}

// deadlineError is the error of a call of n cases to who that timed out.
func (h *Host) deadlineError(who string, n int) error {
	return fmt.Errorf("%s: %w: no answer within %v, the deadline of a call of %d case(s) (%v + %v a case; --call-timeout sets the base)",
		who, ErrDeadline, h.deadline(n), n, h.callTimeout, h.callTimeout/PerCaseShare)
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
	path, err := h.m.Binary(p.entry)
	if err != nil {
		return fmt.Errorf("verifying %s: %w", id, err)
	}
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

func (h *Host) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// Close stops every plugin. Calls after Close fail with ErrClosed.
func (h *Host) Close() error {
	h.mu.Lock()
	procs := h.procs
	h.procs = map[scorer.ID]*proc{}
	solos := h.solos
	h.solos = map[*proc]bool{}
	h.closed = true
	h.mu.Unlock()
	for _, p := range procs {
		p.close()
	}
	for p := range solos {
		p.close()
	}
	return h.removeSockets()
}

// socketDir returns the run's private directory for the plugins' sockets,
// making it at the first launch (scorerpb.NewSocketDir, which also removes
// the directories of runs killed outright): a launch fails when it cannot
// be made private.
func (h *Host) socketDir() (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return "", ErrClosed
	}
	if h.sockets == nil {
		dir, err := scorerpb.NewSocketDir()
		if err != nil {
			return "", err
		}
		h.sockets = dir
	}
	return h.sockets.Path, nil
}

// needsTLS says whether scorer id started only with AutoMTLS earlier in
// the run: its later launches go straight to AutoMTLS.
func (h *Host) needsTLS(id scorer.ID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tls[id]
}

// noteTLS remembers that scorer id started only with AutoMTLS, and warns
// once.
func (h *Host) noteTLS(id scorer.ID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tls[id] {
		return
	}
	if h.tls == nil {
		h.tls = map[scorer.ID]bool{}
	}
	h.tls[id] = true
	h.warned = append(h.warned, fmt.Sprintf("scorer %s did not start without TLS; it was started with AutoMTLS (slower; see docs/plugins.md, \"The connection\")", id))
}

// Warnings are the run's warnings so far, in the order they arose: each
// scorer that started only with AutoMTLS (docs/plugins.md, "The
// connection"). Run outputs list them (summary.json "warnings").
func (h *Host) Warnings() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.warned...)
}

// removeSockets removes the socket directory with whatever a killed plugin
// left in it.
func (h *Host) removeSockets() error {
	h.mu.Lock()
	dir := h.sockets
	h.sockets = nil
	h.mu.Unlock()
	if dir == nil {
		return nil
	}
	if err := dir.Remove(); err != nil {
		return fmt.Errorf("removing the plugin socket directory: %w", err)
	}
	return nil
}

// Score scores a batch of cases with scorer id and returns one outcome per
// case, in order; it never fails the whole batch. Each case is stripped to
// the parts the scorer declares. When the whole call fails (the plugin
// died, hung past the deadline or answered garbage) the cases are run again
// on a process of their own, replayed whole or one at a time, so that only a case
// that breaks the plugin by itself fails (see isolate.go); a case the scorer
// returned an error for is tried once more alone. A failed case's outcome
// carries a *ScorerError.
func (h *Host) Score(ctx context.Context, id scorer.ID, cases []*scorer.Case) []batchrun.Outcome {
	out := make([]batchrun.Outcome, len(cases))
	if len(cases) == 0 {
		return out
	}
	l, err := h.lane(id)
	if err != nil {
		for i, c := range cases {
			out[i] = batchrun.Outcome{Err: &ScorerError{ID: id, Case: c.ID, Err: err}}
		}
		return out
	}
	sent := make([]*scorer.Case, len(cases))
	for i, c := range cases {
		sent[i] = scorerpb.StripCase(l.desc, c)
	}
	a := &attempt{h: h, id: id, l: l, cases: sent, out: out}
	a.run(ctx)
	k := newContract(l.desc, h.limits.MaxChecks)
	for i, o := range out {
		if o.Err != nil || o.Result == nil {
			continue
		}
		if err := k.check(sent[i], o.Result); err != nil {
			out[i] = batchrun.Outcome{Err: &ScorerError{ID: id, Case: cases[i].ID, Err: err}}
		}
	}
	return out
}

// lane returns where scorer id's batches go: its plugin's shared process,
// or the in-process runner.
func (h *Host) lane(id scorer.ID) (lane, error) {
	hl := h.health(id)
	if s, ok := h.inProcess[id]; ok {
		call := func(ctx context.Context, cs []*scorer.Case) ([]batchrun.Outcome, error) {
			return h.inProcessCall(ctx, id, s, cs)
		}
		return lane{desc: batchrun.Describe(s), shared: call, solo: func() (caller, func()) { return call, func() {} }, health: hl}, nil
	}
	p, err := h.proc(id)
	if err != nil {
		return lane{}, err
	}
	return lane{desc: p.entry.Description(), shared: p.score, solo: func() (caller, func()) { return h.solo(p.entry) }, health: hl}, nil
}

// solo starts a process of its own for entry e (launched on its first call)
// and returns its caller and a function that stops it.
func (h *Host) solo(e Entry) (caller, func()) {
	p := &proc{h: h, entry: e, logger: h.logger.Named(string(e.ID)).Named("solo")}
	h.mu.Lock()
	closed := h.closed
	if !closed {
		h.solos[p] = true
	}
	h.mu.Unlock()
	if closed {
		return func(context.Context, []*scorer.Case) ([]batchrun.Outcome, error) { return nil, ErrClosed }, func() {}
	}
	return p.score, func() {
		h.mu.Lock()
		delete(h.solos, p)
		h.mu.Unlock()
		p.close()
	}
}

// inProcessCall scores cs with s in the host under the deadline for their
// number. At the deadline the call fails as a whole, as a plugin's would; a
// scorer that ignores its context is left running in the background.
func (h *Host) inProcessCall(ctx context.Context, id scorer.ID, s batchrun.Scorer, cs []*scorer.Case) ([]batchrun.Outcome, error) {
	cctx, cancel := context.WithTimeout(ctx, h.deadline(len(cs)))
	defer cancel()
	done := make(chan []batchrun.Outcome, 1)
	go func() { done <- batchrun.Score(cctx, s, cs, 0) }()
	select {
	case outs := <-done:
		if cctx.Err() == nil || ctx.Err() != nil {
			return outs, nil
		}
	case <-cctx.Done():
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return nil, h.deadlineError(fmt.Sprintf("scorer %s (in-process)", id), len(cs))
}

// health returns the breaker of scorer id.
func (h *Host) health(id scorer.ID) *health {
	h.mu.Lock()
	defer h.mu.Unlock()
	hl, ok := h.healths[id]
	if !ok {
		hl = &health{id: id}
		h.healths[id] = hl
	}
	return hl
}
