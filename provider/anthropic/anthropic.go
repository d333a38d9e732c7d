package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/internal/adapter"
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
	// DefaultIdleTimeout is how long a stream may go without a byte, and
	// how long it waits for its response headers. It is the shared
	// transport's default, httpx.DefaultIdleTimeout (120 seconds).
	DefaultIdleTimeout = httpx.DefaultIdleTimeout

	providerName = "anthropic"
)

// Model is a Claude model behind the Anthropic Messages API. It implements
// [llm.Model] and is safe for concurrent use.
type Model struct {
	// slowPath decodes every event with encoding/json; set by tests and
	// benchmarks only, to compare with the hand-written delta decoder.
	slowPath  bool
	o         adapter.Options
	autoCache bool

	transport httpx.Client // posts to {base}/v1/messages
	err       error        // a malformed base URL, returned by every call
}

// Option configures a Model.
type Option func(*Model)

func set(f func(*adapter.Options)) Option { return func(m *Model) { f(&m.o) } }

// WithAPIKey sets the API key (default: $ANTHROPIC_API_KEY).
func WithAPIKey(key string) Option { return set(func(o *adapter.Options) { o.SetAPIKey(key) }) }

// WithBaseURL sets the API's base URL (default: $ANTHROPIC_BASE_URL, else
// DefaultBaseURL); "/v1/messages" is appended, as the official SDKs do.
func WithBaseURL(url string) Option { return set(func(o *adapter.Options) { o.BaseURL = url }) }

// WithHTTPClient sets the HTTP client (default: http.DefaultClient). Its
// Timeout, if any, bounds whole streams too; prefer WithIdleTimeout and
// contexts.
func WithHTTPClient(c *http.Client) Option { return set(func(o *adapter.Options) { o.HTTP = c }) }

// WithHeader adds a header to every request, such as an anthropic-beta
// flag. It may override the adapter's own headers except x-api-key, which
// WithAPIKey sets.
func WithHeader(key, value string) Option {
	return set(func(o *adapter.Options) { o.AddHeader(key, value) })
}

// WithIdleTimeout sets how long a stream, or the body of a blocking answer
// once its headers are in, may wait for a byte before it fails with
// llm.ErrIdleTimeout (default DefaultIdleTimeout).
func WithIdleTimeout(d time.Duration) Option { return set(func(o *adapter.Options) { o.Idle = d }) }

// WithMaxEventSize bounds the size of one stream event (default 8 MiB); a
// larger event fails with llm.ErrTooLarge.
func WithMaxEventSize(n int) Option { return set(func(o *adapter.Options) { o.MaxEvent = n }) }

// WithModel sets the model used when a request names none (default
// DefaultModel).
func WithModel(name string) Option { return set(func(o *adapter.Options) { o.Model = name }) }

// WithMaxTokens sets max_tokens for requests whose MaxTokens is 0.
func WithMaxTokens(n int) Option { return set(func(o *adapter.Options) { o.MaxTokens = n }) }

// WithAutoCache turns the automatic prompt-cache breakpoints on (the
// default) or off.
func WithAutoCache(on bool) Option { return func(m *Model) { m.autoCache = on } }

// WithCatalog sets the catalog the model's limits and price come from (a
// new catalog.Default() by default): Info reads it, and the default
// max_tokens is capped at the maximum output it gives.
func WithCatalog(c *catalog.Catalog) Option { return set(func(o *adapter.Options) { o.Catalog = c }) }

// New returns a Model configured by the environment and opts. Without an
// API key, calls to Anthropic's own endpoint (api.anthropic.com) fail with
// an llm.ErrAuth error naming ANTHROPIC_API_KEY before anything is sent; calls to another base URL (a gateway that adds its own
// credentials) go without x-api-key.
//
// New never fails: a malformed base URL (one that is not an absolute http
// or https URL) makes every call fail with an llm.ErrInvalidRequest error
// that names it.
func New(opts ...Option) *Model {
	m := &Model{autoCache: true}
	for _, o := range opts {
		o(m)
	}
	m.o.Resolve(adapter.Service{Provider: providerName, KeyEnv: []string{"ANTHROPIC_API_KEY"},
		BaseEnv: []string{"ANTHROPIC_BASE_URL"}, BaseURL: DefaultBaseURL, Model: DefaultModel})
	endpoint, err := httpx.Endpoint(providerName, m.o.BaseURL, "/v1/messages", DefaultBaseURL)
	if err != nil {
		m.err = err
	}
	m.transport = m.o.Transport(providerName, endpoint, http.Header{"Anthropic-Version": {APIVersion}}, "X-Api-Key", "", decodeHTTPError)
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
	info := m.o.Info(m.servingProvider())
	info.Structured = llm.StructuredSchema // output_config.format
	return info
}

// Generate makes one blocking call.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	body, err := m.encode(req, false)
	if err != nil {
		return nil, err
	}
	// The API sends nothing until the whole answer is ready, so only the
	// context bounds the wait for the headers; once they are in, the body
	// follows at once, and a server that stalls sending it fails with
	// llm.ErrIdleTimeout instead of hanging the call.
	resp, err := m.transport.Post(ctx, body, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := httpx.ReadBody(providerName, resp.Body, 0)
	if err != nil {
		return nil, m.transport.TransportError(ctx, err)
	}
	out, err := parseResponse(data)
	if err != nil {
		if e, ok := err.(*llm.Error); ok {
			e.StatusCode = resp.StatusCode
			e.RequestID = resp.Header.Get("request-id")
		}
		return nil, m.transport.Redact(err)
	}
	return out, nil
}

// Stream makes a streaming call. It runs on the caller's goroutine;
// breaking out of the range cancels the request and closes the body.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		body, err := m.encode(req, true)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		// The idle timeout also bounds the wait for the response headers:
		// a server that accepts the request and never answers fails the
		// stream with llm.ErrIdleTimeout instead of hanging it.
		resp, err := m.transport.Post(ctx, body, true)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		// Closing the body also cancels the request.
		defer resp.Body.Close()
		s := streamState{ctx: ctx, requestID: resp.Header.Get("request-id"), transport: &m.transport, slow: m.slowPath}
		s.run(sse.NewDecoder(resp.Body, sse.Options{MaxEventSize: m.o.MaxEvent}), yield)
		if s.completed && resp.ProtoMajor < 2 {
			drainForReuse(resp.Body)
		}
	}
}

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

// encode checks the configuration and req, and returns the request body.
// Nothing is sent when it fails.
func (m *Model) encode(req *llm.Request, stream bool) ([]byte, error) {
	if m.err != nil {
		return nil, m.err
	}
	if req == nil {
		return nil, invalid("nil request")
	}
	if err := m.o.MissingKey(providerName, DefaultBaseURL, "ANTHROPIC_API_KEY", "anthropic.WithAPIKey"); err != nil {
		return nil, err
	}
	return m.encodeRequest(req, stream)
}

// decodeHTTPError is the transport's error decoder (httpx.Client's
// DecodeError): the kind, Anthropic's error type and message, and the
// request id (the header's, else the body's) of a non-2xx response. The
// transport adds the status and Retry-After, and redacts the key.
func decodeHTTPError(resp *http.Response, body []byte) *llm.Error {
	e := &llm.Error{
		Kind:      httpx.KindForStatus(resp.StatusCode),
		RequestID: resp.Header.Get("request-id"),
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
		e.Message = httpx.Snippet(body)
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
