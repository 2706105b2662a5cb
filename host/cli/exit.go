package cli

import (
	"errors"
	"fmt"
)

// Exit codes (docs/cli.md).
const (
	ExitOK      = 0 // everything passed
	ExitGate    = 1 // a quality gate failed (or, for eval --fail-on, the verdict)
	ExitInvalid = 2 // invalid input: flags, pack, turns
	ExitHost    = 3 // the host cannot run: invariant mismatch, plugin or database failure
)

// ExitError carries an exit code with the error that caused it. A nil Err
// with a code means the message was already printed.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// invalid wraps err as an invalid-input error (exit 2).
func invalid(err error) error { return &ExitError{Code: ExitInvalid, Err: err} }

// invalidf formats an invalid-input error (exit 2).
func invalidf(format string, args ...any) error {
	return invalid(fmt.Errorf(format, args...))
}

// hostErr wraps err as a host failure (exit 3).
func hostErr(err error) error { return &ExitError{Code: ExitHost, Err: err} }

// exitCode returns the exit code for err and whether its message should be
// printed.
func exitCode(err error) (int, bool) {
	if err == nil {
		return ExitOK, false
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code, ee.Err != nil
	}
	return ExitHost, true
}
