package verdict

import (
	"errors"
	"fmt"
)

// ArtifactState is a state of the artifact repair loop.
type ArtifactState string

// The states: an artifact starts VALID or INVALID; an INVALID one goes to
// REPAIR, a repaired version is submitted (RE_EVALUATE) and validated again,
// which lands in VALID or INVALID. EXHAUSTED ends a loop that ran out of
// repair attempts.
const (
	StateValid      ArtifactState = "VALID"
	StateInvalid    ArtifactState = "INVALID"
	StateRepair     ArtifactState = "REPAIR"
	StateReEvaluate ArtifactState = "RE_EVALUATE"
	StateExhausted  ArtifactState = "EXHAUSTED"
)

var (
	// ErrRepairExhausted is returned when an artifact is still invalid after
	// the last allowed repair attempt.
	ErrRepairExhausted = errors.New("artifact still invalid after the last repair attempt")
)

// TransitionError is an illegal move of the repair loop.
type TransitionError struct {
	From, To ArtifactState
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("artifact repair: illegal transition %s -> %s", e.From, e.To)
}

// legal is the transition table.
var legal = map[ArtifactState][]ArtifactState{
	StateInvalid:    {StateRepair, StateExhausted},
	StateRepair:     {StateReEvaluate},
	StateReEvaluate: {StateValid, StateInvalid},
}

// CanTransition reports whether the repair loop may move from one state to
// another.
func CanTransition(from, to ArtifactState) bool {
	for _, s := range legal[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Repair drives one artifact through INVALID -> REPAIR -> RE-EVALUATE until
// it is VALID or the attempts run out. It is not safe for concurrent use.
type Repair struct {
	kind        string
	content     any
	state       ArtifactState
	result      ArtifactResult
	attempts    int
	maxAttempts int
	history     []ArtifactState
}

// NewRepair validates content as an artifact of kind and starts the loop in
// VALID or INVALID. maxAttempts bounds the repairs (at least 1).
func NewRepair(kind string, content any, maxAttempts int) *Repair {
	r := &Repair{kind: kind, content: content, maxAttempts: max(1, maxAttempts)}
	r.result = ValidateArtifact(kind, content)
	r.state = StateInvalid
	if r.result.Valid {
		r.state = StateValid
	}
	r.history = []ArtifactState{r.state}
	return r
}

// State is the current state.
func (r *Repair) State() ArtifactState { return r.state }

// Result is the latest validation result.
func (r *Repair) Result() ArtifactResult { return r.result }

// Content is the latest content (the original or the last submitted repair).
func (r *Repair) Content() any { return r.content }

// Attempts is the number of repairs started so far.
func (r *Repair) Attempts() int { return r.attempts }

// History is every state the loop has been in, in order.
func (r *Repair) History() []ArtifactState { return append([]ArtifactState(nil), r.history...) }

func (r *Repair) move(to ArtifactState) error {
	if !CanTransition(r.state, to) {
		return &TransitionError{From: r.state, To: to}
	}
	r.state = to
	r.history = append(r.history, to)
	return nil
}

// StartRepair moves INVALID -> REPAIR. When every attempt is used it moves
// to EXHAUSTED instead and returns ErrRepairExhausted.
func (r *Repair) StartRepair() error {
	if r.state == StateInvalid && r.attempts >= r.maxAttempts {
		if err := r.move(StateExhausted); err != nil {
			return err
		}
		return fmt.Errorf("artifact repair after %d attempts: %w", r.attempts, ErrRepairExhausted)
	}
	if err := r.move(StateRepair); err != nil {
		return err
	}
	r.attempts++
	return nil
}

// Submit hands in the repaired content: REPAIR -> RE_EVALUATE.
func (r *Repair) Submit(content any) error {
	if err := r.move(StateReEvaluate); err != nil {
		return err
	}
	r.content = content
	return nil
}

// ReEvaluate validates the submitted content: RE_EVALUATE -> VALID or INVALID.
func (r *Repair) ReEvaluate() (ArtifactResult, error) {
	if r.state != StateReEvaluate {
		return r.result, &TransitionError{From: r.state, To: StateValid}
	}
	res := ValidateArtifact(r.kind, r.content)
	to := StateInvalid
	if res.Valid {
		to = StateValid
	}
	if err := r.move(to); err != nil {
		return r.result, err
	}
	r.result = res
	return res, nil
}

// Fixer returns a repaired version of content given why it is invalid.
type Fixer func(content any, result ArtifactResult) (any, error)

// Run drives the whole loop with fix until the artifact is VALID (nil error)
// or the attempts run out (ErrRepairExhausted) or fix fails.
func (r *Repair) Run(fix Fixer) (ArtifactResult, error) {
	for r.state != StateValid {
		if err := r.StartRepair(); err != nil {
			return r.result, err
		}
		next, err := fix(r.content, r.result)
		if err != nil {
			return r.result, fmt.Errorf("artifact repair attempt %d: %w", r.attempts, err)
		}
		if err := r.Submit(next); err != nil {
			return r.result, err
		}
		if _, err := r.ReEvaluate(); err != nil {
			return r.result, err
		}
	}
	return r.result, nil
}
