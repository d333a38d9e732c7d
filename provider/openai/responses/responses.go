package responses

import (
	"context"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/internal/adapter"
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
	o         adapter.Options
	store     bool
	summary   string
	encrypted int8 // 0: by model family, 1: always, -1: never
}

// Option configures a Model.
type Option func(*config)

func set(f func(*adapter.Options)) Option { return func(c *config) { f(&c.o) } }

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
	m := &Model{cfg: cfg}
	m.client, m.err = m.cfg.o.Bearer(adapter.Service{Provider: errProvider, KeyEnv: []string{"OPENAI_API_KEY"},
		BaseEnv: []string{"OPENAI_BASE_URL"}, BaseURL: DefaultBaseURL, Model: DefaultModel},
		"/responses", DefaultBaseURL, true, "OPENAI_API_KEY", "responses.WithAPIKey", adapter.DecodeHTTPError)
	return m
}

// WithAPIKey sets the API key, sent as "Authorization: Bearer <key>". An
// empty key sends no Authorization header (and stops OPENAI_API_KEY from
// being read).
func WithAPIKey(key string) Option {
	return set(func(o *adapter.Options) { o.SetAPIKey(key) })
}

// WithBaseURL sets the base URL, e.g. "https://api.openai.com/v1";
// requests go to {base}/responses.
func WithBaseURL(base string) Option {
	return set(func(o *adapter.Options) { o.BaseURL = base })
}

// WithModel sets the model used when a Request names none ([DefaultModel]
// by default); Info describes it.
func WithModel(model string) Option {
	return set(func(o *adapter.Options) { o.Model = model })
}

// WithHeader adds a header to every request (OpenAI-Organization,
// OpenAI-Project, a gateway's own auth, ...). It may be given several
// times. Headers set here replace the adapter's own, except Authorization
// when an API key is set.
func WithHeader(key, value string) Option {
	return set(func(o *adapter.Options) { o.AddHeader(key, value) })
}

// WithHTTPClient sets the HTTP client (http.DefaultClient by default). Its
// Timeout, if any, bounds whole streams, so leave it zero and rely on
// contexts and the idle timeout instead.
func WithHTTPClient(client *http.Client) Option {
	return set(func(o *adapter.Options) { o.HTTP = client })
}

// WithIdleTimeout sets how long a response may go without a byte
// ([DefaultIdleTimeout] by default); a stalled stream then fails with
// llm.ErrIdleTimeout. For streams it also bounds the wait for the response
// headers.
func WithIdleTimeout(d time.Duration) Option {
	return set(func(o *adapter.Options) { o.Idle = d })
}

// WithMaxEventSize bounds one server-sent event (8 MiB by default); a larger
// one fails the stream with llm.ErrTooLarge. The final event of a stream
// repeats the whole response (an image generation's picture included), so
// keep it generous.
func WithMaxEventSize(n int) Option {
	return set(func(o *adapter.Options) { o.MaxEvent = n })
}

// WithMaxBodySize bounds a non-streamed response body (32 MiB by default);
// a larger one fails with llm.ErrTooLarge.
func WithMaxBodySize(n int64) Option {
	return set(func(o *adapter.Options) { o.MaxBody = n })
}

// WithCatalog sets the catalog Info reads the model's limits and price
// from (a new catalog.Default() by default).
func WithCatalog(c *catalog.Catalog) Option {
	return set(func(o *adapter.Options) { o.Catalog = c })
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
	if u, err := url.Parse(m.cfg.o.BaseURL); err == nil && strings.EqualFold(u.Hostname(), "api.openai.com") {
		provider = "openai"
	}
	info := m.cfg.o.Info(provider)
	info.Structured = llm.StructuredStrict // text.format json_schema
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
	return adapter.Answer(ctx, &m.client, resp, m.cfg.o.MaxBody, m.decodeResponse)
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
		adapter.Pump(ctx, &m.client, resp, m.cfg.o.MaxBody, m.decodeResponse, m.open, yield)
	}
}

// open returns the reader of a response's event stream.
func (m *Model) open(r io.Reader) adapter.Events { return newStreamReader(m, r) }

func (m *Model) invalid(msg string) error {
	return &llm.Error{Kind: llm.KindInvalidRequest, Provider: errProvider, Message: msg}
}

func (m *Model) malformed(msg string) *llm.Error {
	return &llm.Error{Kind: llm.KindMalformed, Provider: errProvider, Message: msg}
}
