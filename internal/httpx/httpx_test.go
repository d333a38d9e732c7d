package httpx

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
)

func TestKindForStatus(t *testing.T) {
	tests := []struct {
		status int
		want   llm.ErrorKind
	}{
		{429, llm.KindRateLimited}, {401, llm.KindAuth}, {403, llm.KindAuth}, {503, llm.KindOverloaded},
		{529, llm.KindOverloaded}, {500, llm.KindServer}, {502, llm.KindServer}, {400, llm.KindInvalidRequest},
		{404, llm.KindInvalidRequest}, {413, llm.KindContextLength},
		{501, llm.KindInvalidRequest}, {505, llm.KindInvalidRequest}, // not retryable: asking again changes nothing
	}
	for _, tc := range tests {
		if got := KindForStatus(tc.status); got != tc.want {
			t.Errorf("KindForStatus(%d) = %v, want %v", tc.status, got, tc.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{"milliseconds header wins", http.Header{"Retry-After": {"7"}, "Retry-After-Ms": {"1500"}}, 1500 * time.Millisecond},
		{"http date", http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}, 30 * time.Second},
		{"absent", http.Header{}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
	}
	for _, tc := range tests {
		if got := ParseRetryAfter(tc.h, now); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestReadBodyLimit(t *testing.T) {
	_, err := ReadBody("p", strings.NewReader(strings.Repeat("a", 11)), 10)
	if !errors.Is(err, llm.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	b, err := ReadBody("p", strings.NewReader("abc"), 10)
	if err != nil || string(b) != "abc" {
		t.Fatalf("got %q, %v", b, err)
	}
}

func TestTransportError(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want error
	}{
		{"context cancelled", cancelled, errors.New("read: closed"), llm.ErrCancelled},
		{"idle timeout", context.Background(), sse.ErrIdleTimeout, llm.ErrIdleTimeout},
		{"too large", context.Background(), sse.ErrEventTooLarge, llm.ErrTooLarge},
		{"reset", context.Background(), errors.New("connection reset by peer"), llm.ErrNetwork},
	}
	for _, tc := range tests {
		if got := TransportError(tc.ctx, "p", tc.err); !errors.Is(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := TransportError(cancelled, "p", errors.New("x")); !errors.Is(got, context.Canceled) {
		t.Errorf("cancelled error does not match context.Canceled: %v", got)
	}
}
