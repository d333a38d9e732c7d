package openai

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
// names one, at OpenAI (without a preset). A preset brings its own default
// (the DeepSeek preset deepseek-chat, Ollama's llama3.2) or none (the
// others: their models are chosen with WithModel or Request.Model).
const DefaultModel = "gpt-4.1-mini"

// DefaultIdleTimeout is how long a stream may go without a byte before it
// fails with llm.ErrIdleTimeout, and how long a stream waits for its
// response headers. It is the shared transport's default,
// httpx.DefaultIdleTimeout (120 seconds).
const DefaultIdleTimeout = httpx.DefaultIdleTimeout

// Model is a chat model behind a Chat Completions endpoint. It implements
// llm.Model and is safe for concurrent use.
type Model struct {
	cfg    config
	client httpx.Client // posts to {base}/chat/completions
	err    error        // a configuration error, returned by every call
}

var _ llm.Model = (*Model)(nil)

// config is what the options set.
type config struct {
	o              adapter.Options
	svc            adapter.Service // the preset's
	keyRequired    bool            // the default base URL needs a key
	maxTokensParam string
	sendReasoning  bool
	// structured is the structured-output mode Info reports: set by a
	// preset or WithStructuredOutput; nil means strict on OpenAI's own
	// endpoint and none elsewhere.
	structured *llm.StructuredMode
}

// WithStructuredOutput sets the native structured-output mode the model's
// Info reports (llm.ModelInfo.Structured), which package structured reads
// to choose between a json_schema response format and a forced tool. The
// default is llm.StructuredStrict on OpenAI's endpoint, the preset's mode
// with a preset, and llm.StructuredNone (a forced tool) for any other
// server: give llm.StructuredSchema for a server whose json_schema
// response format works.
func WithStructuredOutput(mode llm.StructuredMode) Option {
	return func(c *config) { c.structured = &mode }
}

// Option configures a Model.
type Option func(*config)

func set(f func(*adapter.Options)) Option { return func(c *config) { f(&c.o) } }

// New returns a Model for OpenAI, or for any OpenAI-compatible server when
// an option or OPENAI_BASE_URL names another base URL. Options apply in
// order, so a preset ([DeepSeek], [Ollama], ...) goes first and explicit
// options after it override it.
//
// The API key is, in order: WithAPIKey, the preset's environment variable
// (OPENAI_API_KEY by default). The base URL is, in order: WithBaseURL, the
// preset's environment variable (OPENAI_BASE_URL by default), the preset's
// default ([DefaultBaseURL]). Requests go to {base}/chat/completions, as the
// official SDKs send them, so a base URL ends in "/v1" (or whatever version
// path the server uses). The model is WithModel's, else the preset's
// default ([DefaultModel] for OpenAI).
//
// Without a key, calls to the service's own endpoint (the host of the
// preset's default base URL: api.openai.com, api.deepseek.com, ...) fail
// with an llm.ErrAuth error naming the key's variable before anything is
// sent; calls to any other base URL go without an Authorization header, as
// local servers (Ollama, vLLM) and gateways that add their own credentials
// need.
//
// New never fails; a malformed base URL or a missing key is reported by
// every call.
func New(opts ...Option) *Model {
	cfg := config{
		svc: adapter.Service{Provider: "openai", KeyEnv: []string{"OPENAI_API_KEY"}, BaseEnv: []string{"OPENAI_BASE_URL"},
			BaseURL: DefaultBaseURL, Model: DefaultModel},
		keyRequired: true,
	}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	example := cfg.svc.BaseURL
	if example == "" {
		example = DefaultBaseURL
	}
	vars := "an API key"
	if len(cfg.svc.KeyEnv) > 0 {
		vars = cfg.svc.KeyEnv[0]
	}
	m := &Model{cfg: cfg}
	m.client, m.err = m.cfg.o.Bearer(cfg.svc, "/chat/completions", example, cfg.keyRequired, vars, "openai.WithAPIKey", adapter.DecodeHTTPError)
	return m
}

// WithAPIKey sets the API key, sent as "Authorization: Bearer <key>". An
// empty key sends no Authorization header (and stops the environment
// variable from being read).
func WithAPIKey(key string) Option {
	return set(func(o *adapter.Options) { o.SetAPIKey(key) })
}

// WithBaseURL sets the base URL, e.g. "http://localhost:11434/v1";
// requests go to {base}/chat/completions.
func WithBaseURL(base string) Option {
	return set(func(o *adapter.Options) { o.BaseURL = base })
}

// WithModel sets the model used when a Request names none (by default the
// preset's, [DefaultModel] for OpenAI); Info describes it.
func WithModel(model string) Option {
	return set(func(o *adapter.Options) { o.Model = model })
}

// WithHeader adds a header to every request (OpenRouter's HTTP-Referer,
// OpenAI-Organization, a gateway's own auth, ...). It may be given several
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
// one fails the stream with llm.ErrTooLarge.
func WithMaxEventSize(n int) Option {
	return set(func(o *adapter.Options) { o.MaxEvent = n })
}

// WithMaxBodySize bounds a non-streamed response body (32 MiB by default);
// a larger one fails with llm.ErrTooLarge.
func WithMaxBodySize(n int64) Option {
	return set(func(o *adapter.Options) { o.MaxBody = n })
}

// WithMaxTokensParam names the body field Request.MaxTokens is sent in:
// "max_tokens" or "max_completion_tokens". By default the adapter picks per
// model: OpenAI's reasoning families (o1, o3, o4-mini, gpt-5 and later,
// also behind a "vendor/" prefix as OpenRouter names them) reject
// max_tokens and get max_completion_tokens; every other model gets
// max_tokens, which every compatible server understands. Use this for an
// Azure deployment whose name hides the model family.
func WithMaxTokensParam(name string) Option {
	return func(c *config) { c.maxTokensParam = name }
}

// WithReasoningContent makes assistant messages carry their thinking back
// to the server as "reasoning_content", the way DeepSeek requires it during
// a tool loop (see [DeepSeek] for the exact rule). The DeepSeek preset turns
// it on; use it for another server that hosts a model with the same rule.
func WithReasoningContent(on bool) Option {
	return func(c *config) { c.sendReasoning = on }
}

// WithCatalog sets the catalog Info reads the model's limits and price
// from (a new catalog.Default() by default). Extend a catalog with the
// windows and prices you know (what OpenRouter charges, the num_ctx an
// Ollama server runs with) and give it here.
func WithCatalog(c *catalog.Catalog) Option {
	return set(func(o *adapter.Options) { o.Catalog = c })
}

// Info describes the default model (WithModel): the catalog's entry for it
// (context window, maximum output, price) when the catalog knows it, else
// just the provider and name, with the limits left zero (unknown) and no
// price.
//
// Provider is who serves the model, as the catalog is asked
// (catalog.LookupFor): the preset's name ("deepseek", "ollama", "vllm",
// "openrouter", "qwen", "moonshot", "groq", "xai"), and without a preset
// "openai" only when the base URL is OpenAI's own (api.openai.com); any
// other base URL (OPENAI_BASE_URL or WithBaseURL: LM Studio, a gateway,
// Azure) is "compatible". A price applies only to the provider it is listed
// for, so gpt-4o through OpenRouter or a compatible server keeps its window
// but has no price (an unknown cost) unless the catalog has an entry for
// that provider.
func (m *Model) Info() llm.ModelInfo {
	p := m.servingProvider()
	info := m.cfg.o.Info(p)
	switch {
	case m.cfg.structured != nil:
		info.Structured = *m.cfg.structured
	case p == "openai":
		info.Structured = llm.StructuredStrict
	}
	return info
}

// servingProvider is the provider identity Info reports: the preset's, or
// for the OpenAI preset "compatible" when the base URL is not OpenAI's.
func (m *Model) servingProvider() string {
	if m.cfg.svc.Provider != "openai" {
		return m.cfg.svc.Provider
	}
	if u, err := url.Parse(m.cfg.o.BaseURL); err == nil && strings.EqualFold(u.Hostname(), "api.openai.com") {
		return "openai"
	}
	return "compatible"
}

// Generate sends req without streaming and returns the whole answer.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if m.err != nil {
		return nil, m.err
	}
	body, buf, err := m.encodeBody(req, false)
	if err != nil {
		return nil, err
	}
	resp, err := m.post(ctx, body, buf, false)
	if err != nil {
		return nil, err
	}
	return adapter.Answer(ctx, &m.client, resp, m.cfg.o.MaxBody, m.decodeResponse)
}

// Stream sends req with streaming on. Ranging over the result yields events
// as chunks arrive and ends with one llm.EventComplete, or with an error.
// The iterator reads the response body itself (no goroutine); breaking out
// of the range cancels the request and closes the body. The sequence may be
// ranged over once.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if m.err != nil {
			yield(llm.Event{}, m.err)
			return
		}
		body, buf, err := m.encodeBody(req, true)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		resp, err := m.post(ctx, body, buf, true)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		adapter.Pump(ctx, &m.client, resp, m.cfg.o.MaxBody, m.decodeResponse, m.open, yield)
	}
}

// open returns the reader of a response's event stream.
func (m *Model) open(r io.Reader) adapter.Events { return newStreamReader(m, r) }
