package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
)

const (
	// DefaultBaseURL is the API's address when neither WithBaseURL nor
	// ANTHROPIC_BASE_URL gives one. Requests go to {base}/v1/messages.
	DefaultBaseURL = "https://api.anthropic.com"
	// APIVersion is sent as the anthropic-version header.
	APIVersion = "2023-06-01"
	// DefaultModel is used when neither the request nor WithModel names one.
	DefaultModel = "claude-sonnet-4-6"
	// DefaultMaxTokens is max_tokens when neither the request nor
	// WithMaxTokens sets it (lowered to the model's maximum output when the
	// catalog knows a smaller one). The API requires max_tokens, and
	// Anthropic's rate limiter counts it against the output budget up
	// front, so the default is moderate rather than the model's maximum.
	DefaultMaxTokens = 8192
	// DefaultIdleTimeout is how long a stream may go without a byte.
	DefaultIdleTimeout = 120 * time.Second

	providerName = "anthropic"
	errBodyLimit = 64 << 10
)

// Model is a Claude model behind the Anthropic Messages API. It implements
// [llm.Model] and is safe for concurrent use.
type Model struct {
	apiKey    string
	baseURL   string
	endpoint  string
	client    *http.Client
	header    http.Header
	idle      time.Duration
	maxEvent  int
	model     string
	maxTokens int
	autoCache bool
	catalog   *catalog.Catalog
}

// Option configures a Model.
type Option func(*Model)

// WithAPIKey sets the API key (default: $ANTHROPIC_API_KEY).
func WithAPIKey(key string) Option { return func(m *Model) { m.apiKey = key } }

// WithBaseURL sets the API's base URL (default: $ANTHROPIC_BASE_URL, else
// DefaultBaseURL); "/v1/messages" is appended, as the official SDKs do.
func WithBaseURL(url string) Option { return func(m *Model) { m.baseURL = url } }

// WithHTTPClient sets the HTTP client (default: http.DefaultClient). Its
// Timeout, if any, bounds whole streams too; prefer WithIdleTimeout and
// contexts.
func WithHTTPClient(c *http.Client) Option { return func(m *Model) { m.client = c } }

// WithHeader adds a header to every request, such as an anthropic-beta
// flag. It may override the adapter's own headers except x-api-key, which
// WithAPIKey sets.
func WithHeader(key, value string) Option {
	return func(m *Model) {
		if m.header == nil {
			m.header = http.Header{}
		}
		m.header.Add(key, value)
	}
}

// WithIdleTimeout sets how long a stream, or the body of a blocking answer
// once its headers are in, may wait for a byte before it fails with
// llm.ErrIdleTimeout (default DefaultIdleTimeout).
func WithIdleTimeout(d time.Duration) Option { return func(m *Model) { m.idle = d } }

// WithMaxEventSize bounds the size of one stream event (default 8 MiB); a
// larger event fails with llm.ErrTooLarge.
func WithMaxEventSize(n int) Option { return func(m *Model) { m.maxEvent = n } }

// WithModel sets the model used when a request names none (default
// DefaultModel).
func WithModel(name string) Option { return func(m *Model) { m.model = name } }

// WithMaxTokens sets max_tokens for requests whose MaxTokens is 0.
func WithMaxTokens(n int) Option { return func(m *Model) { m.maxTokens = n } }

// WithAutoCache turns the automatic prompt-cache breakpoints on (the
// default) or off.
func WithAutoCache(on bool) Option { return func(m *Model) { m.autoCache = on } }

// WithCatalog sets the catalog the model's limits and price come from (a
// new catalog.Default() by default): Info reads it, and the default
// max_tokens is capped at the maximum output it gives.
func WithCatalog(c *catalog.Catalog) Option { return func(m *Model) { m.catalog = c } }

// New returns a Model configured by the environment and opts. Without an
// API key, calls to the default base URL fail with llm.ErrAuth before
// anything is sent; calls to another base URL (a gateway that adds its own
// credentials) go without x-api-key.
func New(opts ...Option) *Model {
	m := &Model{
		apiKey:    os.Getenv("ANTHROPIC_API_KEY"),
		baseURL:   os.Getenv("ANTHROPIC_BASE_URL"),
		idle:      DefaultIdleTimeout,
		model:     DefaultModel,
		autoCache: true,
	}
	for _, o := range opts {
		o(m)
	}
	if m.baseURL == "" {
		m.baseURL = DefaultBaseURL
	}
	if m.client == nil {
		m.client = http.DefaultClient
	}
	if m.model == "" {
		m.model = DefaultModel
	}
	if m.catalog == nil {
		m.catalog = catalog.Default()
	}
	m.endpoint = strings.TrimRight(m.baseURL, "/") + "/v1/messages"
	return m
}

// Info describes the default model: the catalog's entry when it knows the
// model (limits and price), else its provider and name only.
//
// Provider is who serves the model, as the catalog is asked
// (catalog.LookupFor): "anthropic" when the base URL is Anthropic's own
// (api.anthropic.com), "compatible" for any other (a gateway, or another
// vendor's Anthropic-compatible endpoint). A compatible server keeps the
// model's limits but not Anthropic's price, so its cost is unknown unless
// the catalog has an entry for provider "compatible".
func (m *Model) Info() llm.ModelInfo {
	provider := m.servingProvider()
	if info, ok := m.catalog.LookupFor(provider, m.model); ok {
		return info
	}
	return llm.ModelInfo{Provider: provider, Name: m.model}
}

// Generate makes one blocking call.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	resp, err := m.send(ctx, req, false)
	if err != nil {
		return nil, err
	}
	// The API sends nothing until the whole answer is ready, so only the
	// context bounds the wait for the headers; once they are in, the body
	// follows at once, and a server that stalls sending it fails with
	// llm.ErrIdleTimeout instead of hanging the call.
	rc := httpx.Stream(resp.Body, m.idle)
	defer rc.Close()
	body, err := httpx.ReadBody(providerName, rc, 0)
	if err != nil {
		return nil, httpx.TransportError(ctx, providerName, err)
	}
	out, err := parseResponse(body)
	if err != nil {
		if e, ok := err.(*llm.Error); ok {
			e.StatusCode = resp.StatusCode
			e.RequestID = resp.Header.Get("request-id")
		}
		return nil, m.redact(err)
	}
	return out, nil
}

// Stream makes a streaming call. It runs on the caller's goroutine;
// breaking out of the range cancels the request and closes the body.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		// The idle timeout also bounds the wait for the response headers:
		// a server that accepts the request and never answers fails the
		// stream with llm.ErrIdleTimeout instead of hanging it.
		idle := m.idle
		if idle <= 0 {
			idle = sse.DefaultIdleTimeout
		}
		timer := time.AfterFunc(idle, func() { cancel(errHeaderTimeout) })
		resp, err := m.send(ctx, req, true)
		fired := !timer.Stop()
		if (fired && err == nil) || (err != nil && errors.Is(context.Cause(ctx), errHeaderTimeout)) {
			if err == nil {
				resp.Body.Close()
			}
			err = &llm.Error{Kind: llm.KindIdleTimeout, Provider: providerName, Message: errHeaderTimeout.Error(), Err: sse.ErrIdleTimeout}
		}
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		body := httpx.Stream(resp.Body, m.idle)
		defer body.Close()
		s := streamState{ctx: ctx, requestID: resp.Header.Get("request-id"), apiKey: m.apiKey}
		s.run(sse.NewDecoder(body, sse.Options{MaxEventSize: m.maxEvent}), yield)
		if s.completed && resp.ProtoMajor < 2 {
			drainForReuse(body)
		}
	}
}

// errHeaderTimeout is the cancellation cause of a stream whose response
// headers did not arrive within the idle timeout.
var errHeaderTimeout = errors.New("no response headers within the idle timeout")

// drainGrace is how long a finished HTTP/1 stream may take to send the end
// of its body.
const drainGrace = 50 * time.Millisecond

// drainForReuse reads what is left of a finished HTTP/1 stream (the end of
// the chunked body usually arrives just after message_stop), so the
// connection goes back to the pool instead of being closed. It gives up
// after drainGrace or 64 KiB. HTTP/2 needs none of this: closing a stream
// early keeps the connection.
func drainForReuse(body io.ReadCloser) {
	t := time.AfterFunc(drainGrace, func() { body.Close() })
	io.CopyN(io.Discard, body, 64<<10)
	t.Stop()
}

// send posts the request and returns the response of a 2xx status; any
// other status becomes a typed error.
func (m *Model) send(ctx context.Context, req *llm.Request, stream bool) (*http.Response, error) {
	if req == nil {
		return nil, invalid("nil request")
	}
	if m.apiKey == "" && m.baseURL == DefaultBaseURL {
		return nil, &llm.Error{Kind: llm.KindAuth, Provider: providerName,
			Message: "no API key: set ANTHROPIC_API_KEY or use anthropic.WithAPIKey"}
	}
	body, err := m.encodeRequest(req, stream)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, m.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, invalid("bad base URL: %v", err)
	}
	h := hreq.Header
	h.Set("Content-Type", "application/json")
	h.Set("Anthropic-Version", APIVersion)
	h.Set("User-Agent", "agcore")
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	for k, vs := range m.header {
		h[k] = append([]string(nil), vs...)
	}
	if m.apiKey != "" {
		h.Set("X-Api-Key", m.apiKey)
	}
	resp, err := m.client.Do(hreq)
	if err != nil {
		return nil, httpx.TransportError(ctx, providerName, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, m.redact(httpError(resp))
	}
	return resp, nil
}

// httpError types a non-2xx response from its status and Anthropic's error
// body.
func httpError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, errBodyLimit))
	e := &llm.Error{
		Kind:       httpx.KindForStatus(resp.StatusCode),
		Provider:   providerName,
		StatusCode: resp.StatusCode,
		RetryAfter: httpx.ParseRetryAfter(resp.Header, time.Now()),
		RequestID:  resp.Header.Get("request-id"),
	}
	var eb wireErrorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error != nil {
		e.Code = eb.Error.Type
		e.Message = eb.Error.Message
		e.Kind = kindForType(eb.Error.Type, e.Message, e.Kind)
		if e.RequestID == "" {
			e.RequestID = eb.RequestID
		}
	} else {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 512 {
			e.Message = e.Message[:512] + "…"
		}
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	return e
}

// kindForType refines an error kind by Anthropic's error type and message.
func kindForType(typ, msg string, fallback llm.ErrorKind) llm.ErrorKind {
	kind := fallback
	switch typ {
	case "overloaded_error":
		kind = llm.KindOverloaded
	case "rate_limit_error":
		kind = llm.KindRateLimited
	case "authentication_error", "permission_error":
		kind = llm.KindAuth
	case "api_error", "timeout_error":
		kind = llm.KindServer
	case "request_too_large":
		kind = llm.KindContextLength
	case "invalid_request_error", "not_found_error", "billing_error":
		kind = llm.KindInvalidRequest
	}
	if kind == llm.KindInvalidRequest && isContextLength(msg) {
		kind = llm.KindContextLength
	}
	return kind
}

// isContextLength recognises Anthropic's "prompt is too long: 210000 tokens
// > 200000 maximum" and "input length and `max_tokens` exceed context
// limit" messages.
func isContextLength(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "prompt is too long") ||
		strings.Contains(msg, "exceed context limit") ||
		strings.Contains(msg, "context window")
}
