package stored

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/agcore/agcore/session"
)

// ConnectionLost reports whether err says the connection to a store's
// server could not be made or broke (refused, reset, closed mid-reply,
// a network timeout), as opposed to an answer the server gave. A context
// that ended is not a lost connection.
func ConnectionLost(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// Unavailable wraps err with session.ErrUnavailable when lost says the
// server could not be reached, so callers can test for it with errors.Is
// whatever the driver; other errors are returned as they are.
func Unavailable(err error, lost func(error) bool) error {
	if err == nil || !lost(err) || errors.Is(err, session.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", session.ErrUnavailable, err)
}
