package responses

import (
	"context"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
)

// DefaultBaseURL is OpenAI's API base URL, used when neither an option nor
// OPENAI_BASE_URL gives one.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultModel is the model used when neither the request nor WithModel
// names one.
const DefaultModel = "gpt-5-mini"

// DefaultIdleTimeout is how long a stream may go without a byte before it
// fails with llm.ErrIdleTimeout, and how long a stream waits for its
// response headers: the shared transport's default (120 seconds).
const DefaultIdleTimeout = httpx.DefaultIdleTimeout

// Provider is the name this adapter gives the API in llm.Thinking.Provider:
// the reasoning items it keeps as thinking blocks are sent back only to an
// adapter of this name.
const Provider = "openai-responses"

// errProvider names the provider in errors: the service is OpenAI's.
const errProvider = "openai"

// Model is a model behind a Responses API endpoint ({base}/responses). It
// implements llm.Model and is safe for concurrent use.
type Model struct {
	cfg    config
	client httpx.Client // posts to {base}/responses
	err    error        // a configuration error, returned by every call
}

var _ llm.Model = (*Model)(nil)

// config is what the options set.
type config struct {
	apiKey    string
	apiKeySet bool
	baseURL   string
	model     string
	headers   http.Header
	client    *http.Client
	idle      time.Duration
	maxEvent  int
	maxBody   int64
	catalog   *catalog.Catalog
	store     bool
	summary   string
	encrypted int8 // 0: by model family, 1: always, -1: never
}

// Option configures a Model.
type Option func(*config)

// New returns a Model for OpenAI's Responses API, or for another server
// that speaks it when an option or OPENAI_BASE_URL names another base URL.
//
// The API key is WithAPIKey's, else OPENAI_API_KEY's. The base URL is
// WithBaseURL's, else OPENAI_BASE_URL's, else [DefaultBaseURL]; requests go
// to {base}/responses, as the official SDKs send them. The model is
// WithModel's, else [DefaultModel].
//
// Without a key, calls to OpenAI's own endpoint (api.openai.com) fail with
// an llm.ErrAuth error naming OPENAI_API_KEY before anything is sent; calls
// to another base URL (a gateway that adds its own credentials, a local
// server) go without an Authorization header.
//
// New never fails; a malformed base URL or a missing key is reported by
// every call.
func New(opts ...Option) *Model {
	var cfg config
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if !cfg.apiKeySet {
		cfg.apiKey = os.Getenv("OPENAI_API_KEY")
	}
	if cfg.baseURL == "" {
		cfg.baseURL = os.Getenv("OPENAI_BASE_URL")
	}
	if cfg.baseURL == "" {
		cfg.baseURL = DefaultBaseURL
	}
	if cfg.model == "" {
		cfg.model = DefaultModel
	}
	if cfg.client == nil {
		cfg.client = http.DefaultClient
	}
	if cfg.idle <= 0 {
		cfg.idle = DefaultIdleTimeout
	}
	if cfg.maxEvent <= 0 {
		cfg.maxEvent = sse.DefaultMaxEventSize
	}
	if cfg.maxBody <= 0 {
		cfg.maxBody = httpx.DefaultMaxBodySize
	}
	if cfg.catalog == nil {
		cfg.catalog = catalog.Default()
	}
	m := &Model{cfg: cfg}
	endpoint, err := httpx.Endpoint(errProvider, cfg.baseURL, "/responses", DefaultBaseURL)
	switch {
	case err != nil:
		m.err = err
	case cfg.apiKey == "" && httpx.SameHost(cfg.baseURL, DefaultBaseURL):
		m.err = httpx.MissingKey(errProvider, "OPENAI_API_KEY", "responses.WithAPIKey")
	}
	auth := ""
	if cfg.apiKey != "" {
		auth = "Bearer " + cfg.apiKey
	}
	m.client = httpx.Client{
		Provider:    errProvider,
		HTTP:        cfg.client,
		Endpoint:    endpoint,
		Idle:        cfg.idle,
		Secret:      cfg.apiKey,
		Header:      httpx.MergeHeader(nil, cfg.headers, "Authorization", auth),
		DecodeError: decodeHTTPError,
	}
	return m
}

// WithAPIKey sets the API key, sent as "Authorization: Bearer <key>". An
// empty key sends no Authorization header (and stops OPENAI_API_KEY from
// being read).
func WithAPIKey(key string) Option {
	return func(c *config) { c.apiKey, c.apiKeySet = key, true }
}

// WithBaseURL sets the base URL, e.g. "https://api.openai.com/v1";
// requests go to {base}/responses.
func WithBaseURL(base string) Option {
	return func(c *config) { c.baseURL = base }
}

// WithModel sets the model used when a Request names none ([DefaultModel]
// by default); Info describes it.
func WithModel(model string) Option {
	return func(c *config) { c.model = model }
}

// WithHeader adds a header to every request (OpenAI-Organization,
// OpenAI-Project, a gateway's own auth, ...). It may be given several
// times. Headers set here replace the adapter's own, except Authorization
// when an API key is set.
func WithHeader(key, value string) Option {
	return func(c *config) {
		if c.headers == nil {
			c.headers = make(http.Header)
		}
		c.headers.Add(key, value)
	}
}

// WithHTTPClient sets the HTTP client (http.DefaultClient by default). Its
// Timeout, if any, bounds whole streams, so leave it zero and rely on
// contexts and the idle timeout instead.
func WithHTTPClient(client *http.Client) Option {
	return func(c *config) { c.client = client }
}

// WithIdleTimeout sets how long a response may go without a byte
// ([DefaultIdleTimeout] by default); a stalled stream then fails with
// llm.ErrIdleTimeout. For streams it also bounds the wait for the response
// headers.
func WithIdleTimeout(d time.Duration) Option {
	return func(c *config) { c.idle = d }
}

// WithMaxEventSize bounds one server-sent event (8 MiB by default); a larger
// one fails the stream with llm.ErrTooLarge. The final event of a stream
// repeats the whole response (an image generation's picture included), so
// keep it generous.
func WithMaxEventSize(n int) Option {
	return func(c *config) { c.maxEvent = n }
}

// WithMaxBodySize bounds a non-streamed response body (32 MiB by default);
// a larger one fails with llm.ErrTooLarge.
func WithMaxBodySize(n int64) Option {
	return func(c *config) { c.maxBody = n }
}

// WithCatalog sets the catalog Info reads the model's limits and price
// from (a new catalog.Default() by default).
func WithCatalog(c *catalog.Catalog) Option {
	return func(cfg *config) { cfg.catalog = c }
}

// WithStore sets the request's "store" field. By default it is false:
// OpenAI keeps nothing, every request carries the whole conversation, and
// reasoning survives a tool loop as encrypted content (see the package
// documentation). With true, OpenAI stores each response; a caller may then
// chain requests with Request.Extra["previous_response_id"] (and send only
// the new messages), and reasoning items are sent back by id even without
// their encrypted content.
func WithStore(store bool) Option {
	return func(c *config) { c.store = store }
}

// WithReasoningSummary asks reasoning models for a summary of their
// reasoning ("auto", "concise" or "detailed"), which arrives as thinking
// text; "" (the default) asks for none. OpenAI gives summaries only to
// verified organizations for some models, and refuses the request
// otherwise, which is why it is off by default.
func WithReasoningSummary(summary string) Option {
	return func(c *config) { c.summary = summary }
}

// WithEncryptedReasoning says whether to ask for the encrypted content of
// reasoning items (include: ["reasoning.encrypted_content"]). By default
// the adapter asks when store is false and the model is one of OpenAI's
// reasoning families (o1, o3, o4-mini, gpt-5 and later, codex) or the
// request sets Request.Reasoning.Effort; other models reject the field.
// Use this for a model whose name hides its family.
func WithEncryptedReasoning(on bool) Option {
	return func(c *config) {
		c.encrypted = -1
		if on {
			c.encrypted = 1
		}
	}
}

// Info describes the default model (WithModel): the catalog's entry for it
// when the catalog knows it, else just the provider and name, with the
// limits left zero (unknown) and no price. Provider is "openai" when the
// base URL is OpenAI's own (api.openai.com), so OpenAI's prices apply, and
// "compatible" for any other server, which gets no price unless the
// catalog has an entry for it.
func (m *Model) Info() llm.ModelInfo {
	provider := "compatible"
	if u, err := url.Parse(m.cfg.baseURL); err == nil && strings.EqualFold(u.Hostname(), "api.openai.com") {
		provider = "openai"
	}
	if m.cfg.model == "" {
		return llm.ModelInfo{Provider: provider}
	}
	info, ok := m.cfg.catalog.LookupFor(provider, m.cfg.model)
	if !ok {
		info = llm.ModelInfo{Provider: provider, Name: m.cfg.model}
	}
	return info
}

// Generate sends req without streaming and returns the whole answer.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if m.err != nil {
		return nil, m.err
	}
	body, err := m.encodeRequest(req, false)
	if err != nil {
		return nil, err
	}
	resp, err := m.client.Post(ctx, body, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := httpx.ReadBody(errProvider, resp.Body, m.cfg.maxBody)
	if err != nil {
		return nil, m.client.TransportError(ctx, err)
	}
	return m.decodeResponse(data, resp.StatusCode)
}

// Stream sends req with streaming on. Ranging over the result yields events
// as they arrive and ends with one llm.EventComplete, or with an error. The
// iterator reads the response body itself (no goroutine); breaking out of
// the range cancels the request and closes the body. The sequence may be
// ranged over once.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if m.err != nil {
			yield(llm.Event{}, m.err)
			return
		}
		body, err := m.encodeRequest(req, true)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		resp, err := m.client.Post(ctx, body, true)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		// Closing the body also cancels the request.
		defer resp.Body.Close()
		if !isEventStream(resp.Header.Get("Content-Type")) {
			// A server that ignored "stream": true answers with one JSON
			// document; replay it as a stream.
			data, err := httpx.ReadBody(errProvider, resp.Body, m.cfg.maxBody)
			if err != nil {
				yield(llm.Event{}, m.client.TransportError(ctx, err))
				return
			}
			r, err := m.decodeResponse(data, resp.StatusCode)
			if err != nil {
				yield(llm.Event{}, err)
				return
			}
			for ev, err := range llm.StreamOf(r) {
				if !yield(ev, err) {
					return
				}
			}
			return
		}
		s := newStreamReader(m, resp.Body)
		for {
			ev, err := s.next()
			if err != nil {
				if err != errStreamDone {
					yield(llm.Event{}, m.client.TransportError(ctx, err))
				}
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func isEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		// No or a malformed Content-Type: assume the stream we asked for.
		return true
	}
	return mt != "application/json"
}

func (m *Model) invalid(msg string) error {
	return &llm.Error{Kind: llm.KindInvalidRequest, Provider: errProvider, Message: msg}
}

func (m *Model) malformed(msg string) *llm.Error {
	return &llm.Error{Kind: llm.KindMalformed, Provider: errProvider, Message: msg}
}
