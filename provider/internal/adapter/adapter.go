// Package adapter holds what the provider adapters (provider/openai,
// provider/openai/responses, provider/anthropic, provider/gemini) share
// beside the HTTP transport (internal/httpx): the options every adapter
// takes, how the unset ones are filled from the environment and the
// defaults, the missing-key check, the transport built from them, and
// Info's catalog lookup. Each adapter keeps its exported With* functions
// as one-line wrappers of [Options]' setters, so its API stays its own.
//
// Why it is not published as a kit for adapters written outside agcore
// (issue 34 asked for it or for this note): its API is made of agcore's
// internal transport (internal/httpx's Client, internal/sse's decoder),
// so publishing it would publish those too, and with them every detail of
// how agcore's four adapters read their wire formats. What an outside
// adapter needs is public: it implements [llm.Model] (Generate from its
// stream with [llm.Collect], events assembled with [llm.Assembler]), maps failures to [llm.Error] kinds, registers its
// providers with provider/registry's Register from its init (so the CLI,
// serve and the worker offer it once imported: cmd/agcore/testdata/outside
// is such a module, built and run by TestOutsideAdapterJoinsTheCLI), and
// proves itself with provider/providertest.Run, the suite agcore's own
// adapters pass.
package adapter

import (
	"net/http"
	"os"
	"time"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
)

// Options is what the options every adapter takes set.
type Options struct {
	APIKey    string
	KeySet    bool // WithAPIKey was given: the environment is not read, even for ""
	BaseURL   string
	Model     string
	Header    http.Header
	HTTP      *http.Client
	Idle      time.Duration
	MaxEvent  int
	MaxBody   int64
	MaxTokens int
	Catalog   *catalog.Catalog
}

// SetAPIKey sets the key; an empty one sends none.
func (o *Options) SetAPIKey(key string) { o.APIKey, o.KeySet = key, true }

// AddHeader adds a header sent with every request.
func (o *Options) AddHeader(key, value string) {
	if o.Header == nil {
		o.Header = http.Header{}
	}
	o.Header.Add(key, value)
}

// Service is what an adapter's unset options default to.
type Service struct {
	// Provider names the provider in errors.
	Provider string
	// KeyEnv and BaseEnv are the variables the key and the base URL are
	// read from, the first one set winning.
	KeyEnv, BaseEnv []string
	// BaseURL is the default base URL; Model the default model ("" for
	// none).
	BaseURL, Model string
}

// Resolve fills what the options left unset: the key and the base URL
// from the environment, then the defaults (the base URL, the model,
// http.DefaultClient, the idle timeout, the size limits, a new default
// catalog).
func (o *Options) Resolve(s Service) {
	if !o.KeySet {
		o.APIKey = firstEnv(s.KeyEnv)
	}
	if o.BaseURL == "" {
		o.BaseURL = firstEnv(s.BaseEnv)
	}
	if o.BaseURL == "" {
		o.BaseURL = s.BaseURL
	}
	if o.Model == "" {
		o.Model = s.Model
	}
	if o.HTTP == nil {
		o.HTTP = http.DefaultClient
	}
	if o.Idle <= 0 {
		o.Idle = httpx.DefaultIdleTimeout
	}
	if o.MaxEvent <= 0 {
		o.MaxEvent = sse.DefaultMaxEventSize
	}
	if o.MaxBody <= 0 {
		o.MaxBody = httpx.DefaultMaxBodySize
	}
	if o.Catalog == nil {
		o.Catalog = catalog.Default()
	}
}

func firstEnv(names []string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// MissingKey is the error of a call without a key to the service's own
// endpoint (the host of defaultBase), naming the variables to set and the
// option (vars, option); nil when a key is set or the base URL is another
// server's (a gateway adding its own credentials, a local server).
func (o *Options) MissingKey(provider, defaultBase, vars, option string) error {
	if o.APIKey != "" || !httpx.SameHost(o.BaseURL, defaultBase) {
		return nil
	}
	return httpx.MissingKey(provider, vars, option)
}

// Transport is the adapter's httpx.Client: the resolved options' HTTP
// client, idle timeout and key (redacted from errors), sent in keyHeader
// (with keyPrefix) when set, after the adapter's own headers and the
// user's (which replace the adapter's).
func (o *Options) Transport(provider, endpoint string, own http.Header, keyHeader, keyPrefix string, decode func(*http.Response, []byte) *llm.Error) httpx.Client {
	key := ""
	if o.APIKey != "" {
		key = keyPrefix + o.APIKey
	}
	return httpx.Client{
		Provider:    provider,
		HTTP:        o.HTTP,
		Endpoint:    endpoint,
		Idle:        o.Idle,
		Secret:      o.APIKey,
		Header:      httpx.MergeHeader(own, o.Header, keyHeader, key),
		DecodeError: decode,
	}
}

// Info describes the default model as the catalog knows it for provider
// (the serving provider: its limits and price), else by its provider and
// name only.
func (o *Options) Info(provider string) llm.ModelInfo {
	if o.Model == "" {
		return llm.ModelInfo{Provider: provider}
	}
	if info, ok := o.Catalog.LookupFor(provider, o.Model); ok {
		return info
	}
	return llm.ModelInfo{Provider: provider, Name: o.Model}
}

// Bearer resolves o for s and returns the transport posting to
// {base}{path} with the key as "Authorization: Bearer <key>" (the OpenAI
// dialects), and the configuration error every call is to return: a
// malformed base URL, or, when keyRequired, a missing key for the
// service's own endpoint (naming keyVars and keyOption). example is the
// base URL an error about a malformed one shows.
func (o *Options) Bearer(s Service, path, example string, keyRequired bool, keyVars, keyOption string, decode func(*http.Response, []byte) *llm.Error) (httpx.Client, error) {
	o.Resolve(s)
	endpoint, err := httpx.Endpoint(s.Provider, o.BaseURL, path, example)
	if err == nil && keyRequired {
		err = o.MissingKey(s.Provider, s.BaseURL, keyVars, keyOption)
	}
	return o.Transport(s.Provider, endpoint, nil, "Authorization", "Bearer ", decode), err
}
