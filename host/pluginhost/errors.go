package pluginhost

import (
	"context"
	"errors"
	"fmt"

	"github.com/assay-eval/assay/pkg/scorer"
)

// FailureTag is the failure tag of a turn a scorer could not score: the
// caller turns an Outcome with Err set into an unscored turn with this tag.
const FailureTag = "scorer_error"

var (
	// ErrUnknownScorer is a scorer id that is neither in the manifest nor
	// served in-process.
	ErrUnknownScorer = errors.New("unknown scorer")
	// ErrChecksum is a plugin binary whose sha256 is not the manifest's.
	ErrChecksum = errors.New("sha256 does not match the manifest")
	// ErrMismatch is a plugin whose Describe disagrees with its manifest entry.
	ErrMismatch = errors.New("describe disagrees with the manifest")
	// ErrClosed is a call on a closed Host.
	ErrClosed = errors.New("plugin host is closed")
	// ErrCrashed is a plugin process that died or answered garbage.
	ErrCrashed = errors.New("plugin broke")
	// ErrBinaryName is a plugin binary not named assay-scorer-<its id>.
	ErrBinaryName = errors.New("plugin binary misnamed")
	// ErrDeadline is a call that got no answer within its deadline; the
	// plugin process was killed.
	ErrDeadline = errors.New("plugin hung")
	// ErrStart is a plugin process that could not be started.
	ErrStart = errors.New("plugin did not start")
	// ErrOutside is a manifest entry whose binary is not a file inside the
	// plugin directory (docs/plugins.md, "Confinement").
	ErrOutside = errors.New("binary outside the plugin directory")
	// ErrContract is a result that breaks the result contract
	// (docs/plugins.md, "Contract checks on results").
	ErrContract = errors.New("result breaks the contract")
	// ErrGaveUp is a scorer the host stopped calling: every one of the last
	// MaxBrokenStreak cases it ran alone crashed or hung it.
	ErrGaveUp = errors.New("plugin keeps breaking")
)

// ScorerError is why one case could not be scored.
type ScorerError struct {
	ID   scorer.ID // the scorer
	Case string    // the case id
	Err  error
}

func (e *ScorerError) Error() string {
	return fmt.Sprintf("scorer %s: case %q: %v", e.ID, e.Case, e.Err)
}

func (e *ScorerError) Unwrap() error { return e.Err }

// permanent reports whether err will not go away by relaunching.
func permanent(err error) bool {
	return errors.Is(err, ErrChecksum) || errors.Is(err, ErrMismatch) || errors.Is(err, ErrUnknownScorer) || errors.Is(err, ErrOutside)
}

// final reports whether err ends the scoring of the cases it hit, whatever
// case they are: nothing a case did causes it (the plugin cannot be started
// or trusted, the host is closed or gave up on it, the caller is gone).
func final(ctx context.Context, err error) bool {
	return ctx.Err() != nil || permanent(err) || errors.Is(err, ErrStart) || errors.Is(err, ErrClosed) || errors.Is(err, ErrGaveUp)
}
