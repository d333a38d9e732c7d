package stored

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/agcore/agcore/session"
)

func TestConnectionLost(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("syntax error"), false},
		{context.Canceled, false},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{io.EOF, true},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{fmt.Errorf("write: %w", syscall.EPIPE), true},
		{syscall.ECONNRESET, true},
		{net.ErrClosed, true},
	}
	for _, tt := range tests {
		if got := ConnectionLost(tt.err); got != tt.want {
			t.Errorf("ConnectionLost(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestUnavailable(t *testing.T) {
	lost := io.ErrUnexpectedEOF
	err := Unavailable(lost, ConnectionLost)
	if !errors.Is(err, session.ErrUnavailable) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Unavailable(lost) = %v: want both the sentinel and the cause", err)
	}
	if again := Unavailable(err, ConnectionLost); again != err {
		t.Fatalf("wrapped twice: %v", again)
	}
	other := errors.New("constraint violated")
	if got := Unavailable(other, ConnectionLost); got != other {
		t.Fatalf("Unavailable(other) = %v, want it unchanged", got)
	}
	if Unavailable(nil, ConnectionLost) != nil {
		t.Fatal("Unavailable(nil) != nil")
	}
}
