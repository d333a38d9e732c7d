package llm

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrorKind classifies a model error so callers and the retry middleware
// can branch on it.
type ErrorKind uint8

// Error kinds. Retryable ones: RateLimited, Overloaded, Server, Network,
// IdleTimeout, Malformed.
const (
	KindUnknown        ErrorKind = iota
	KindRateLimited              // HTTP 429; RetryAfter may be set
	KindOverloaded               // Anthropic 529 / overloaded_error, HTTP 503
	KindAuth                     // HTTP 401/403
	KindContextLength            // the request is larger than the context window
	KindInvalidRequest           // HTTP 400/404/422 and other caller mistakes
	KindServer                   // HTTP 5xx
	KindNetwork                  // connection failures, resets, truncated streams
	KindIdleTimeout              // no byte arrived for the idle timeout
	KindCancelled                // the context was cancelled or its deadline passed
	KindTooLarge                 // an event or body exceeded its size limit
	KindMalformed                // the provider sent something that does not parse
)

var kindNames = [...]string{
	KindUnknown:        "unknown",
	KindRateLimited:    "rate_limited",
	KindOverloaded:     "overloaded",
	KindAuth:           "auth",
	KindContextLength:  "context_length",
	KindInvalidRequest: "invalid_request",
	KindServer:         "server",
	KindNetwork:        "network",
	KindIdleTimeout:    "idle_timeout",
	KindCancelled:      "cancelled",
	KindTooLarge:       "too_large",
	KindMalformed:      "malformed",
}

// String returns the kind's snake_case name ("rate_limited", ...).
func (k ErrorKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Retryable reports whether an error of this kind may succeed if the same
// request is sent again.
func (k ErrorKind) Retryable() bool {
	switch k {
	case KindRateLimited, KindOverloaded, KindServer, KindNetwork, KindIdleTimeout, KindMalformed:
		return true
	}
	return false
}

// kindError is the sentinel for one kind; *Error matches it in errors.Is.
type kindError ErrorKind

func (k kindError) Error() string { return "llm: " + ErrorKind(k).String() }

// Sentinels for errors.Is: errors.Is(err, llm.ErrRateLimited) is true for
// any *Error of that kind anywhere in err's chain.
var (
	ErrRateLimited    error = kindError(KindRateLimited)
	ErrOverloaded     error = kindError(KindOverloaded)
	ErrAuth           error = kindError(KindAuth)
	ErrContextLength  error = kindError(KindContextLength)
	ErrInvalidRequest error = kindError(KindInvalidRequest)
	ErrServer         error = kindError(KindServer)
	ErrNetwork        error = kindError(KindNetwork)
	ErrIdleTimeout    error = kindError(KindIdleTimeout)
	ErrCancelled      error = kindError(KindCancelled)
	ErrTooLarge       error = kindError(KindTooLarge)
	ErrMalformed      error = kindError(KindMalformed)
)

// Error is a failed model call. It keeps the provider's own message and
// never holds a secret (adapters never put request headers in it).
type Error struct {
	Kind       ErrorKind
	Provider   string        // "openai", "anthropic", ...
	StatusCode int           // HTTP status; 0 when none (network, in-band errors after 200 keep 200)
	Code       string        // the provider's error type or code, e.g. "rate_limit_exceeded"
	Message    string        // the provider's message, or a description
	RetryAfter time.Duration // from Retry-After headers; 0 when not given
	RequestID  string        // the provider's request id, when sent
	Err        error         // the underlying cause, if any
}

// Error formats the error as "provider: kind (status code): message".
func (e *Error) Error() string {
	s := e.Provider
	if s == "" {
		s = "llm"
	}
	s += ": " + e.Kind.String()
	if e.StatusCode != 0 {
		s += " (HTTP " + strconv.Itoa(e.StatusCode) + ")"
	}
	if e.Code != "" && e.Code != e.Kind.String() {
		s += " [" + e.Code + "]"
	}
	if e.Message != "" {
		s += ": " + e.Message
	} else if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(kindError)
	return ok && ErrorKind(k) == e.Kind
}

// KindOf returns the kind of the first *Error in err's chain; context
// cancellation and deadlines are KindCancelled; nil is KindUnknown.
func KindOf(err error) ErrorKind {
	if err == nil {
		return KindUnknown
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return KindCancelled
	}
	return KindUnknown
}

// IsRetryable reports whether err is worth retrying (see ErrorKind.Retryable).
func IsRetryable(err error) bool { return KindOf(err).Retryable() }

// RetryAfterOf returns the Retry-After duration of the first *Error in err's
// chain, or 0.
func RetryAfterOf(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

// Cancelled wraps a context error as a KindCancelled *Error; it still
// matches context.Canceled or context.DeadlineExceeded in errors.Is.
func Cancelled(provider string, cause error) *Error {
	return &Error{Kind: KindCancelled, Provider: provider, Message: cause.Error(), Err: cause}
}
