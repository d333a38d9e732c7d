package gemini

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/internal/adapter"
)

const (
	// DefaultBaseURL is the Gemini API's address when neither WithBaseURL
	// nor GOOGLE_GEMINI_BASE_URL (or GEMINI_BASE_URL) gives one. Requests
	// go to {base}/v1beta/models/{model}:generateContent and
	// :streamGenerateContent?alt=sse.
	DefaultBaseURL = "https://generativelanguage.googleapis.com"
	// APIVersion is the API version in the request path.
	APIVersion = "v1beta"
	// DefaultModel is used when neither the request nor WithModel names one.
	DefaultModel = "gemini-2.5-flash"
	// DefaultIdleTimeout is how long a stream may go without a byte, and
	// how long it waits for its response headers. It is the shared
	// transport's default, httpx.DefaultIdleTimeout (120 seconds).
	DefaultIdleTimeout = httpx.DefaultIdleTimeout

	// providerName names the adapter in errors and in the Provider of the
	// signatures it keeps (llm.Thinking.Provider, llm.ToolUse.Provider).
	providerName = "gemini"
)

// Model is a Gemini model behind Google's Gemini API (or Vertex AI's
// endpoint of the same shape, see WithVertex). It implements [llm.Model]
// and is safe for concurrent use.
type Model struct {
	// slowPath decodes every chunk with encoding/json; set by tests and
	// benchmarks only, to compare with the hand-written chunk decoder.
	slowPath bool
	o        adapter.Options
	builtin  []string // built-in tools, such as "googleSearch"
	project  string   // Vertex AI: project and location; empty for the Gemini API
	location string

	transport httpx.Client // its Endpoint is set per call (the model is in the path)
	err       error        // a malformed base URL, returned by every call
}

// Option configures a Model.
type Option func(*Model)

func set(f func(*adapter.Options)) Option { return func(m *Model) { f(&m.o) } }

// WithAPIKey sets the API key (default: $GEMINI_API_KEY, else
// $GOOGLE_API_KEY). It is sent as the x-goog-api-key header, never in the
// URL.
func WithAPIKey(key string) Option { return set(func(o *adapter.Options) { o.SetAPIKey(key) }) }

// WithBaseURL sets the API's base URL (default: $GOOGLE_GEMINI_BASE_URL,
// else $GEMINI_BASE_URL, else DefaultBaseURL); "/v1beta/models/..." is
// appended.
func WithBaseURL(url string) Option { return set(func(o *adapter.Options) { o.BaseURL = url }) }

// WithHTTPClient sets the HTTP client (default: http.DefaultClient). Its
// Timeout, if any, bounds whole streams too; prefer WithIdleTimeout and
// contexts.
func WithHTTPClient(c *http.Client) Option { return set(func(o *adapter.Options) { o.HTTP = c }) }

// WithHeader adds a header to every request (an Authorization bearer token
// for Vertex AI, a gateway's own header). It may override the adapter's
// own headers except x-goog-api-key, which WithAPIKey sets.
func WithHeader(key, value string) Option {
	return set(func(o *adapter.Options) { o.AddHeader(key, value) })
}

// WithIdleTimeout sets how long a stream, or the body of a blocking answer
// once its headers are in, may wait for a byte before it fails with
// llm.ErrIdleTimeout (default DefaultIdleTimeout).
func WithIdleTimeout(d time.Duration) Option { return set(func(o *adapter.Options) { o.Idle = d }) }

// WithMaxEventSize bounds the size of one stream chunk (default 8 MiB); a
// larger one fails with llm.ErrTooLarge.
func WithMaxEventSize(n int) Option { return set(func(o *adapter.Options) { o.MaxEvent = n }) }

// WithModel sets the model used when a request names none (default
// DefaultModel).
func WithModel(name string) Option { return set(func(o *adapter.Options) { o.Model = name }) }

// WithMaxTokens sets maxOutputTokens for requests whose MaxTokens is 0
// (default: none is sent, and the model's own maximum applies).
func WithMaxTokens(n int) Option { return set(func(o *adapter.Options) { o.MaxTokens = n }) }

// WithBuiltinTool offers one of Gemini's built-in tools with every request,
// by its field name in the API's Tool object: "googleSearch",
// "codeExecution", "urlContext". It is sent as {name: {}} after the
// request's function declarations. Their results come back as text with
// citations (grounding) or as "gemini.*" extension blocks (code execution).
func WithBuiltinTool(name string) Option {
	return func(m *Model) { m.builtin = append(m.builtin, name) }
}

// WithVertex sends requests to Vertex AI's endpoint of the same API:
// {base}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent,
// where base defaults to https://{location}-aiplatform.googleapis.com
// (https://aiplatform.googleapis.com for location "global"). Credentials go
// as WithAPIKey (Vertex AI express mode) or as an Authorization header
// given with WithHeader (an OAuth access token, which this package does
// not refresh).
func WithVertex(project, location string) Option {
	return func(m *Model) { m.project, m.location = project, location }
}

// WithCatalog sets the catalog the model's limits and price come from (a
// new catalog.Default() by default).
func WithCatalog(c *catalog.Catalog) Option { return set(func(o *adapter.Options) { o.Catalog = c }) }

// New returns a Model configured by the environment and opts. Without an
// API key, calls to the Gemini API's own endpoint
// (generativelanguage.googleapis.com) fail with an llm.ErrAuth error naming
// GEMINI_API_KEY before anything is sent; calls to another base URL (a gateway that adds its own
// credentials, Vertex AI with a bearer token) go without x-goog-api-key.
//
// New never fails: a malformed base URL makes every call fail with an
// llm.ErrInvalidRequest error that names it.
func New(opts ...Option) *Model {
	m := &Model{}
	for _, o := range opts {
		o(m)
	}
	base := DefaultBaseURL
	if m.project != "" {
		if m.location == "" {
			m.location = "global"
		}
		base = vertexBase(m.location)
	}
	m.o.Resolve(adapter.Service{Provider: providerName, KeyEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		BaseEnv: []string{"GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL"}, BaseURL: base, Model: DefaultModel})
	if _, err := httpx.Endpoint(providerName, m.o.BaseURL, "", DefaultBaseURL); err != nil {
		m.err = err
	}
	m.transport = m.o.Transport(providerName, "", nil, "X-Goog-Api-Key", "", decodeHTTPError)
	return m
}

func vertexBase(location string) string {
	if location == "" || location == "global" {
		return "https://aiplatform.googleapis.com"
	}
	return "https://" + location + "-aiplatform.googleapis.com"
}

// Info describes the default model: the catalog's entry when it knows the
// model (limits and price), else its provider and name only.
//
// Provider is who serves the model, as the catalog is asked
// (catalog.LookupFor): "google" when the base URL is one of Google's
// (*.googleapis.com: the Gemini API, Vertex AI), "compatible" for any
// other (a gateway), which keeps the model's limits but not Google's price.
func (m *Model) Info() llm.ModelInfo {
	info := m.o.Info(m.servingProvider())
	info.Structured = llm.StructuredSchema // responseJsonSchema
	return info
}

func (m *Model) servingProvider() string {
	if u, err := url.Parse(m.o.BaseURL); err == nil {
		if h := strings.ToLower(u.Hostname()); h == "googleapis.com" || strings.HasSuffix(h, ".googleapis.com") {
			return CatalogProvider
		}
	}
	return "compatible"
}

// Generate makes one blocking call (generateContent).
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	c, body, model, err := m.prepare(req, false)
	if err != nil {
		return nil, err
	}
	// The API sends nothing until the whole answer is ready, so only the
	// context bounds the wait for the headers; a body that stalls once
	// they are in fails with llm.ErrIdleTimeout.
	resp, err := c.Post(ctx, body, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := httpx.ReadBody(providerName, resp.Body, 0)
	if err != nil {
		return nil, c.TransportError(ctx, err)
	}
	out, err := parseResponse(data, model)
	if err != nil {
		if e, ok := err.(*llm.Error); ok {
			e.StatusCode = resp.StatusCode
		}
		return nil, c.Redact(err)
	}
	return out, nil
}

// Stream makes a streaming call (streamGenerateContent?alt=sse). It runs
// on the caller's goroutine; breaking out of the range cancels the request
// and closes the body.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		c, body, model, err := m.prepare(req, true)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		resp, err := c.Post(ctx, body, true)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		// Closing the body also cancels the request.
		defer resp.Body.Close()
		s := streamState{ctx: ctx, transport: &c, slow: m.slowPath}
		s.turn.init(model)
		s.run(sse.NewDecoder(resp.Body, sse.Options{MaxEventSize: m.o.MaxEvent}), yield)
	}
}

// prepare checks the configuration and req, and returns the transport for
// this call (its endpoint names the model), the body and the model.
// Nothing is sent when it fails.
func (m *Model) prepare(req *llm.Request, stream bool) (httpx.Client, []byte, string, error) {
	c := m.transport
	if m.err != nil {
		return c, nil, "", m.err
	}
	if req == nil {
		return c, nil, "", invalid("nil request")
	}
	if err := m.o.MissingKey(providerName, DefaultBaseURL, "GEMINI_API_KEY (or GOOGLE_API_KEY)", "gemini.WithAPIKey"); err != nil {
		return c, nil, "", err
	}
	model := req.Model
	if model == "" {
		model = m.o.Model
	}
	path, err := m.path(model, stream)
	if err != nil {
		return c, nil, "", err
	}
	if c.Endpoint, err = httpx.Endpoint(providerName, m.o.BaseURL, path, DefaultBaseURL); err != nil {
		return c, nil, "", err
	}
	if stream {
		if strings.Contains(c.Endpoint, "?") {
			c.Endpoint += "&alt=sse"
		} else {
			c.Endpoint += "?alt=sse"
		}
	}
	body, err := m.encodeRequest(req)
	return c, body, strings.TrimPrefix(model, "models/"), err
}

// path returns the endpoint path for model: models/{model} (or a resource
// name given whole, such as tunedModels/x) under the API version, or the
// Vertex AI publisher model.
func (m *Model) path(model string, stream bool) (string, error) {
	for _, r := range model {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._/@", r)) {
			return "", invalid("invalid model name %q", model)
		}
	}
	if model == "" || strings.Contains(model, "..") {
		return "", invalid("invalid model name %q", model)
	}
	method := ":generateContent"
	if stream {
		method = ":streamGenerateContent"
	}
	if m.project != "" {
		return "/v1/projects/" + url.PathEscape(m.project) + "/locations/" + url.PathEscape(m.location) +
			"/publishers/google/models/" + strings.TrimPrefix(model, "models/") + method, nil
	}
	if !strings.Contains(model, "/") {
		model = "models/" + model
	}
	return "/" + APIVersion + "/" + model + method, nil
}
