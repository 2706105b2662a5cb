package pluginhost

import (
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
	// ErrCrashed is a plugin process that died, hung or answered garbage.
	ErrCrashed = errors.New("plugin broke")
	// ErrBinaryName is a plugin binary not named assay-scorer-<its id>.
	ErrBinaryName = errors.New("plugin binary misnamed")
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
	return errors.Is(err, ErrChecksum) || errors.Is(err, ErrMismatch) || errors.Is(err, ErrUnknownScorer)
}
