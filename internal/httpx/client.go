package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agcore/agcore/internal/redact"
	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/observe"
)

// DefaultIdleTimeout is how long a response may go without a byte, and a
// stream may wait for its response headers, before the call fails with
// llm.ErrIdleTimeout. It is sse.DefaultIdleTimeout, so a Client and a bare
// sse.IdleReader agree.
const DefaultIdleTimeout = sse.DefaultIdleTimeout

// ErrorBodyLimit bounds how much of a non-2xx response body is read to
// build the error. 64 KiB: every provider's error document is a few hundred
// bytes, and a gateway's HTML error page needs only its first few hundred
// characters for a message, so a larger limit would only let a misbehaving
// server make every failed attempt of a retry loop buffer more. A longer
// body is cut at the limit, not refused: the error decoder then sees
// truncated text, which it reports as a snippet.
const ErrorBodyLimit = 64 << 10

// ErrHeaderTimeout is the cancellation cause (context.Cause) of a stream's
// request whose response headers did not arrive within the idle timeout.
// The error Post then returns has kind llm.KindIdleTimeout and this
// sentinel's text as its message, and wraps both this sentinel and
// sse.ErrIdleTimeout (what a stalled body's error wraps), so errors.Is tells
// the two stalls apart.
var ErrHeaderTimeout = errors.New("no response headers within the idle timeout")

// errHeaderIdle is the cause a header timeout's *llm.Error wraps.
var errHeaderIdle = fmt.Errorf("%w (%w)", ErrHeaderTimeout, sse.ErrIdleTimeout)

// secretMin is the shortest secret Redact replaces: replacing a shorter one
// would mangle ordinary words in a message.
const secretMin = 8

// Client is the HTTP side of one configured adapter: where requests go,
// with what headers, how long they may stall, and how a failure becomes a
// typed *llm.Error. Fill it in once (the adapter's New) and do not change
// it afterwards; it is then safe for concurrent use.
type Client struct {
	// Provider names the provider in every error ("openai", "anthropic",
	// a preset's name).
	Provider string
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP *http.Client
	// Endpoint is the absolute URL requests are posted to, as [Endpoint]
	// builds it from a base URL.
	Endpoint string
	// Idle bounds the wait for each byte of a response body and, for a
	// stream, for the response headers; <= 0 means DefaultIdleTimeout.
	Idle time.Duration
	// Secret is the API key: Redact removes it from every error the
	// Client returns, in case a server or gateway echoes it back. A secret
	// shorter than 8 bytes is not redacted (it would mangle ordinary
	// words), and none is ever put into an error by the Client itself.
	Secret string
	// Header is sent with every request, after the defaults (Content-Type:
	// application/json, Accept: text/event-stream or application/json,
	// User-Agent: agcore), which its keys replace. Build it with
	// [MergeHeader]; its keys must be in canonical form. The Client never
	// modifies it.
	Header http.Header
	// DecodeError reads a non-2xx response's body (at most ErrorBodyLimit
	// bytes of it; the Client reads and closes resp.Body) into a typed
	// error: its
	// Kind (refined from KindForStatus by the body), Code, Message and
	// RequestID, and RetryAfter when the body says how long to wait (as
	// Google's RetryInfo does). The Client sets Provider and StatusCode
	// itself, and RetryAfter from the Retry-After headers when they give
	// one (they win over the body's), falls back to KindForStatus for a KindUnknown error and to a
	// snippet of the body or the status text for an empty message, and
	// redacts the result. Nil decodes nothing: the status and a snippet of
	// the body.
	DecodeError func(resp *http.Response, body []byte) *llm.Error
}

// MergeHeader returns a Client's Header: own (the adapter's own headers,
// such as anthropic-version), then user's (the WithHeader option), each key
// of user replacing own's values, then authKey: authValue, set last so that
// no user header replaces the credential. An empty authValue sets no
// credential, which leaves a user's header of that name in place (a gateway
// with its own auth). Keys are canonicalized and values copied.
func MergeHeader(own, user http.Header, authKey, authValue string) http.Header {
	h := make(http.Header, len(own)+len(user)+1)
	for _, src := range []http.Header{own, user} {
		for k, vs := range src {
			h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
		}
	}
	if authValue != "" {
		h.Set(authKey, authValue)
	}
	return h
}

// Post sends body as a JSON POST to the endpoint and returns the response
// of a 2xx status. When ctx carries an [observe.Observer] (a traced run),
// the request also carries its trace context headers (traceparent). Its Body is guarded by the idle timeout (a Read that
// waits longer fails with sse.ErrIdleTimeout); the caller must close it.
//
// A stream (stream true) asks for text/event-stream, and the idle timeout
// also bounds the wait for the response headers: a server that accepts the
// request and never answers fails with a KindIdleTimeout error (see
// [ErrHeaderTimeout]) instead of hanging until ctx ends. Closing a stream's
// Body also cancels its request. A blocking call (stream false) asks for
// application/json and waits for its headers as long as ctx allows: the
// server sends them only when the whole answer is ready.
//
// Any other status becomes the error DecodeError makes of its body; a
// failure to send becomes a TransportError. Every error is an *llm.Error
// with Secret redacted.
func (c *Client) Post(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	return c.post(ctx, body, nil, stream)
}

// PostBuffer is Post for a body written into a buffer from GetBuffer,
// which PostBuffer takes over (the caller must not touch it again): it is
// put back into the pool once the response's Body is closed (or the call
// failed) and the transport has closed every reader of the body it was
// given (see buffer.go).
func (c *Client) PostBuffer(ctx context.Context, buf *[]byte, stream bool) (*http.Response, error) {
	s := &sharedBody{buf: buf}
	resp, err := c.post(ctx, *buf, s, stream)
	if err != nil {
		s.finish()
		return nil, err
	}
	resp.Body = &finishBody{ReadCloser: resp.Body, s: s}
	return resp, nil
}

// post is Post, reading body through shared's readers when shared is not
// nil.
func (c *Client) post(ctx context.Context, body []byte, shared *sharedBody, stream bool) (*http.Response, error) {
	reqCtx, cancel := ctx, context.CancelCauseFunc(nil)
	if stream {
		reqCtx, cancel = context.WithCancelCause(ctx)
	}
	var rd io.Reader
	if shared == nil {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.Endpoint, rd)
	if err != nil {
		if cancel != nil {
			cancel(nil)
		}
		return nil, c.Redact(&llm.Error{Kind: llm.KindInvalidRequest, Provider: c.Provider, Message: redactURL(err.Error())})
	}
	if shared != nil && len(body) > 0 {
		// What NewRequestWithContext sets for a bytes.Reader: the
		// length, the body, and fresh readers for a retry.
		hreq.ContentLength = int64(len(body))
		hreq.Body, _ = shared.reader() // cannot fail: the call is not finished
		hreq.GetBody = shared.reader
	}
	c.setHeader(hreq.Header, stream)
	if o := observe.From(ctx); o != nil {
		// The trace context of the model call (W3C traceparent), so that a
		// gateway or server that traces joins the caller's trace.
		o.Inject(ctx, hreq.Header.Set)
	}
	client := c.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	var timer *time.Timer
	if stream {
		timer = time.AfterFunc(c.idle(), func() { cancel(ErrHeaderTimeout) })
	}
	resp, err := client.Do(hreq)
	if timer != nil && !timer.Stop() && errors.Is(context.Cause(reqCtx), ErrHeaderTimeout) {
		// The timer fired first: whatever Do returned, the request's
		// context is cancelled, so a body would be unusable.
		if err == nil {
			resp.Body.Close()
		}
		cancel(nil)
		return nil, &llm.Error{Kind: llm.KindIdleTimeout, Provider: c.Provider, Message: ErrHeaderTimeout.Error(), Err: errHeaderIdle}
	}
	if err != nil {
		if cancel != nil {
			cancel(nil)
		}
		return nil, c.TransportError(ctx, err)
	}
	var rc io.ReadCloser = sse.NewIdleReader(resp.Body, c.idle())
	if cancel != nil {
		rc = &cancelBody{rc, cancel}
	}
	resp.Body = rc
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer rc.Close()
		// A failed read leaves what arrived; the status alone still makes
		// a typed error.
		data, _ := io.ReadAll(io.LimitReader(rc, ErrorBodyLimit))
		return nil, c.StatusError(resp, data)
	}
	return resp, nil
}

// setHeader fills a request's header: the defaults, then c.Header's
// values. Every value is a copy (all in one allocation), so nothing a
// RoundTripper does to a request's header reaches c.Header or another
// request.
func (c *Client) setHeader(h http.Header, stream bool) {
	n := 3
	for _, vs := range c.Header {
		n += len(vs)
	}
	vals := make([]string, 0, n)
	set := func(k string, vs ...string) {
		i := len(vals)
		vals = append(vals, vs...)
		h[k] = vals[i:len(vals):len(vals)]
	}
	set("Content-Type", "application/json")
	if stream {
		set("Accept", "text/event-stream")
	} else {
		set("Accept", "application/json")
	}
	set("User-Agent", "agcore")
	for k, vs := range c.Header {
		set(k, vs...)
	}
}

func (c *Client) idle() time.Duration {
	if c.Idle > 0 {
		return c.Idle
	}
	return DefaultIdleTimeout
}

// cancelBody is a stream's body: closing it also cancels the request's
// context.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}

// StatusError is the error for a non-2xx response whose body (at most
// ErrorBodyLimit bytes of it) is body: DecodeError's, completed with the
// provider, the status, Retry-After and a fallback kind and message, and
// redacted. Post returns it; it is exported for tests and fuzzing.
func (c *Client) StatusError(resp *http.Response, body []byte) *llm.Error {
	var e *llm.Error
	if c.DecodeError != nil {
		e = c.DecodeError(resp, body)
	}
	if e == nil {
		e = &llm.Error{Message: Snippet(body)}
	}
	e.Provider = c.Provider
	e.StatusCode = resp.StatusCode
	if ra := ParseRetryAfter(resp.Header, time.Now()); ra > 0 || e.RetryAfter < 0 {
		e.RetryAfter = ra
	}
	if e.Kind == llm.KindUnknown {
		e.Kind = KindForStatus(resp.StatusCode)
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if e.Message == "" {
		e.Message = "HTTP status " + resp.Status
	}
	c.redactError(e)
	return e
}

// TransportError is [TransportError] for this Client's provider, with the
// secret redacted.
func (c *Client) TransportError(ctx context.Context, err error) error {
	return c.Redact(TransportError(ctx, c.Provider, err))
}

// Redact removes the Client's secret from the message and code of the
// first *llm.Error in err's chain, in case a server echoed it back, and
// returns err. Other errors are returned unchanged, and a nil Client
// redacts nothing.
func (c *Client) Redact(err error) error {
	var e *llm.Error
	if errors.As(err, &e) {
		c.redactError(e)
	}
	return err
}

func (c *Client) redactError(e *llm.Error) {
	if c == nil || len(c.Secret) < secretMin {
		return
	}
	secret := []string{c.Secret}
	e.Message = redact.Text(e.Message, secret)
	e.Code = redact.Text(e.Code, secret)
}

// snippetMax is the longest body text Snippet keeps, in bytes.
const snippetMax = 500

// Snippet is a non-JSON error body (an HTML page, plain text) trimmed and
// shortened to a message: an HTML page is its title (else its first
// heading, else "an HTML page"), on one line; other text at most 500
// bytes, cut at a UTF-8 boundary, with "…" when cut.
func Snippet(body []byte) string {
	s := strings.TrimSpace(string(body))
	if t, ok := htmlTitle(s); ok {
		s = t
	}
	if len(s) <= snippetMax {
		return s
	}
	n := snippetMax
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// htmlTitle returns the title of an HTML page on one line (its first
// <h1> when it has no title, "an HTML page" when it has neither); ok is
// false when s is not an HTML page.
func htmlTitle(s string) (string, bool) {
	if !strings.HasPrefix(s, "<") {
		return "", false
	}
	lower := strings.ToLower(s)
	if !strings.Contains(lower, "<html") && !strings.HasPrefix(lower, "<!doctype html") && !strings.Contains(lower, "<title") {
		return "", false
	}
	for _, tag := range []string{"title", "h1"} {
		i := strings.Index(lower, "<"+tag)
		if i < 0 {
			continue
		}
		start := strings.IndexByte(lower[i:], '>')
		if start < 0 {
			continue
		}
		start += i + 1
		end := strings.Index(lower[start:], "</"+tag)
		if end < 0 {
			continue
		}
		text := stripTags(s[start : start+end])
		if text = strings.Join(strings.Fields(html.UnescapeString(text)), " "); text != "" {
			return text, true
		}
	}
	return "an HTML page", true
}

// stripTags drops the tags from a bit of HTML (an <h1> may hold some).
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}
