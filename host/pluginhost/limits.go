package pluginhost

import (
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/assay-eval/assay/pkg/excerpt"
	"github.com/assay-eval/assay/pkg/scorer"
)

// Limits caps what a plugin process may use and what a scorer may return
// (docs/plugins.md, "Limits" and "Contract checks on results"). A zero
// field is no limit.
type Limits struct {
	// AddressSpace is the plugin's RLIMIT_AS in bytes.
	AddressSpace uint64
	// CPU is the plugin's RLIMIT_CPU: CPU time over the process's life.
	CPU time.Duration
	// Processes is the plugin's RLIMIT_NPROC: processes and threads of the
	// user the host runs as, counted across the whole machine.
	Processes uint64
	// MaxChecks is the most checks one result may hold.
	MaxChecks int
}

// Defaults for Limits.
const (
	DefaultAddressSpace = 4 << 30
	DefaultCPU          = time.Hour
	DefaultMaxChecks    = 256
)

// DefaultLimits are the limits a Host applies unless WithLimits is given.
func DefaultLimits() Limits {
	return Limits{AddressSpace: DefaultAddressSpace, CPU: DefaultCPU, MaxChecks: DefaultMaxChecks}
}

// WithLimits sets the plugins' resource limits and the result caps.
func WithLimits(l Limits) Option { return func(h *Host) { h.limits = l } }

var tagPattern = regexp.MustCompile(`^[a-z0-9_]+$`)

// contract checks results against their scorer's description
// (docs/plugins.md, "Contract checks on results"); the set of declared KPI
// keys is built once per batch, not once per result.
type contract struct {
	d         scorer.Description
	declared  map[string]bool
	maxChecks int
}

func newContract(d scorer.Description, maxChecks int) *contract {
	declared := make(map[string]bool, len(d.KPIs))
	for _, k := range d.KPIs {
		declared[k.Key] = true
	}
	return &contract{d: d, declared: declared, maxChecks: maxChecks}
}

// upstreamCarries says whether a check of the upstream results case c was
// given is for kpi (a composite passes those on).
func upstreamCarries(c *scorer.Case, kpi string) bool {
	for _, u := range c.Upstream {
		for _, uc := range u.Result.Checks {
			if uc.KPI == kpi {
				return true
			}
		}
	}
	return false
}

// check checks a result for case c: every check is for a KPI key the
// scorer declares or one a check of the upstream results it was given
// carries (a composite passes those on), passed agrees with the score
// (passed exactly when the score is 1), at most maxChecks checks, details
// and evidence within the excerpt bound, failure tags of [a-z0-9_] only.
func (k *contract) check(c *scorer.Case, r *scorer.Result) error {
	d, maxChecks := k.d, k.maxChecks
	if maxChecks > 0 && len(r.Checks) > maxChecks {
		return fmt.Errorf("%w: %d checks, more than the %d a result may hold", ErrContract, len(r.Checks), maxChecks)
	}
	for i, ch := range r.Checks {
		if !k.declared[ch.KPI] && !upstreamCarries(c, ch.KPI) {
			return fmt.Errorf("%w: check %d is for KPI %q, which scorer %s does not declare and no upstream check carries", ErrContract, i, ch.KPI, d.ID)
		}
		if ch.Passed != (ch.Score >= 1) {
			return fmt.Errorf("%w: check %d (%s) has passed %t with score %v (a check passes exactly when its score is 1)", ErrContract, i, ch.KPI, ch.Passed, ch.Score)
		}
		if n := utf8.RuneCountInString(ch.Detail); n > excerpt.Max {
			return fmt.Errorf("%w: check %d (%s) has a detail of %d characters, more than %d", ErrContract, i, ch.KPI, n, excerpt.Max)
		}
		for j, e := range ch.Evidence {
			if n := utf8.RuneCountInString(e); n > excerpt.Max {
				return fmt.Errorf("%w: check %d (%s) evidence %d has %d characters, more than %d", ErrContract, i, ch.KPI, j, n, excerpt.Max)
			}
		}
		if ch.FailureTag != "" && !tagPattern.MatchString(ch.FailureTag) {
			return fmt.Errorf("%w: check %d (%s) has failure tag %q, not of [a-z0-9_]", ErrContract, i, ch.KPI, ch.FailureTag)
		}
	}
	for _, t := range r.FailureTags {
		if !tagPattern.MatchString(t) {
			return fmt.Errorf("%w: failure tag %q is not of [a-z0-9_]", ErrContract, t)
		}
	}
	return nil
}
