// Package httpx is the HTTP transport the provider adapters share, so that
// OpenAI-compatible and Anthropic calls fail, time out and redact alike:
//
//   - [Endpoint] validates a base URL (absolute http or https) and appends
//     the endpoint path, keeping a query string such as Azure's
//     api-version; a bad one is a KindInvalidRequest error naming the
//     provider, the value and a good example.
//   - [Client] posts a JSON body with the adapter's headers ([MergeHeader]:
//     the user's replace the adapter's, never the credential), bounds a
//     stream's wait for its response headers by the idle timeout
//     ([ErrHeaderTimeout]), guards every body with that timeout, turns a
//     non-2xx status into the adapter's typed error from a bounded body
//     ([ErrorBodyLimit]) with its Retry-After, and redacts the API key from
//     every error it returns ([Client.Redact]).
//   - [KindForStatus], [ParseRetryAfter] and [TransportError] classify
//     failures into *llm.Error kinds; [ReadBody] reads a bounded body.
//   - [MergeExtra] merges Request.Extra into an encoded request body, and
//     [MarshalJSON] encodes JSON as the adapters send it.
//   - When the context carries an observe.Observer (a traced run), every
//     request carries the trace context headers (W3C traceparent).
//
// It imports llm, observe and internal/sse only.
package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
)

// DefaultMaxBodySize bounds a non-streamed response body.
const DefaultMaxBodySize = 32 << 20

// KindForStatus maps an HTTP status to an error kind. Callers refine it with
// the provider's error body (context length, overload).
func KindForStatus(status int) llm.ErrorKind {
	switch {
	case status == http.StatusTooManyRequests:
		return llm.KindRateLimited
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return llm.KindAuth
	case status == http.StatusServiceUnavailable || status == 529:
		return llm.KindOverloaded
	case status == http.StatusRequestEntityTooLarge:
		return llm.KindContextLength
	case status == http.StatusRequestTimeout:
		return llm.KindNetwork
	case status == http.StatusNotImplemented || status == http.StatusHTTPVersionNotSupported:
		// The server does not do what was asked, and asking again will not
		// change that: not retryable.
		return llm.KindInvalidRequest
	case status >= 500:
		return llm.KindServer
	case status >= 400:
		return llm.KindInvalidRequest
	}
	return llm.KindUnknown
}

// ParseRetryAfter reads Retry-After (seconds or an HTTP date) and the
// "retry-after-ms" header some providers send. It returns 0 when absent.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return toDuration(ms, time.Millisecond)
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return toDuration(s, time.Second)
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// toDuration converts n units to a Duration: 0 for NaN and values <= 0,
// the largest Duration for values too large for one (a float conversion
// would overflow to a negative wait).
func toDuration(n float64, unit time.Duration) time.Duration {
	switch d := n * float64(unit); {
	case !(d > 0):
		return 0
	case d >= math.MaxInt64:
		return math.MaxInt64
	default:
		return time.Duration(d)
	}
}

// ReadBody reads at most max bytes (DefaultMaxBodySize if max <= 0); a
// larger body is a KindTooLarge error.
func ReadBody(provider string, r io.Reader, max int64) ([]byte, error) {
	if max <= 0 {
		max = DefaultMaxBodySize
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return b, err
	}
	if int64(len(b)) > max {
		return nil, &llm.Error{Kind: llm.KindTooLarge, Provider: provider, Message: fmt.Sprintf("response body exceeds %d bytes", max)}
	}
	return b, nil
}

// TransportError classifies an error from sending a request or reading a
// body: the context's own cancellation or deadline → KindCancelled, an idle
// timeout → KindIdleTimeout, an oversized event → KindTooLarge, anything
// else → KindNetwork. An *llm.Error passes through unchanged.
func TransportError(ctx context.Context, provider string, err error) error {
	var le *llm.Error
	if errors.As(err, &le) {
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return llm.Cancelled(provider, ctxErr)
	}
	switch {
	case errors.Is(err, sse.ErrIdleTimeout):
		return &llm.Error{Kind: llm.KindIdleTimeout, Provider: provider, Message: "no data received within the idle timeout", Err: err}
	case errors.Is(err, sse.ErrEventTooLarge):
		return &llm.Error{Kind: llm.KindTooLarge, Provider: provider, Message: err.Error(), Err: err}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return llm.IncompleteStream(provider, "")
	}
	return &llm.Error{Kind: llm.KindNetwork, Provider: provider, Message: redactURL(err.Error()), Err: err}
}

// redactURL drops query strings from URLs in a message, in case a caller
// put a key in one.
func redactURL(s string) string {
	if i := strings.Index(s, "?"); i >= 0 {
		if j := strings.IndexAny(s[i:], "\" "); j >= 0 {
			return s[:i] + s[i+j:]
		}
		return s[:i]
	}
	return s
}
