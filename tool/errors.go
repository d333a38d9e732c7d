package tool

import (
	"errors"
	"fmt"
)

// ErrFatal is matched (errors.Is) by every error that stops the turn
// instead of becoming an error result. Tools return it through [Fatal].
var ErrFatal = errors.New("tool: fatal error")

// ErrNotFound is matched by the error of a call to a tool nobody defined.
var ErrNotFound = errors.New("tool not found")

// Fatal wraps err so that it stops the turn: the tool loop returns it (still
// inspectable with errors.Is/As) instead of showing it to the model. Fatal
// returns nil for a nil err.
func Fatal(err error) error {
	if err == nil {
		return nil
	}
	return &fatalError{err: err}
}

// IsFatal reports whether err stops the turn (wraps ErrFatal).
func IsFatal(err error) bool { return errors.Is(err, ErrFatal) }

type fatalError struct{ err error }

func (e *fatalError) Error() string        { return e.err.Error() }
func (e *fatalError) Unwrap() error        { return e.err }
func (e *fatalError) Is(target error) bool { return target == ErrFatal }

// ArgumentError says why a call's arguments were rejected before the tool
// ran: they were not a JSON object or did not match the tool's schema.
type ArgumentError struct {
	Tool string
	Err  error // the JSON or schema problem
}

// Error says which tool's arguments were rejected and why.
func (e *ArgumentError) Error() string {
	return fmt.Sprintf("invalid arguments for tool %q: %v", e.Tool, e.Err)
}

// Unwrap returns the problem.
func (e *ArgumentError) Unwrap() error { return e.Err }
