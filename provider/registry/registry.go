package registry

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
)

// The wire APIs a provider speaks (Provider.Wire).
const (
	// WireOpenAI is Chat Completions at {base}/chat/completions
	// (provider/openai).
	WireOpenAI = "openai"
	// WireResponses is OpenAI's Responses API at {base}/responses
	// (provider/openai/responses).
	WireResponses = "openai-responses"
	// WireAnthropic is the Messages API at {base}/v1/messages
	// (provider/anthropic).
	WireAnthropic = "anthropic"
	// WireGemini is generateContent at {base}/v1beta/models/...
	// (provider/gemini).
	WireGemini = "gemini"
	// WireDemo is the offline scripted model (provider/demo).
	WireDemo = "demo"
)

// Provider is one entry of the table: how a provider's key and base URL
// are found, which model it uses by default and which API it speaks.
type Provider struct {
	// Name is what --provider takes.
	Name string
	// Wire is the API the provider speaks: WireOpenAI, WireResponses,
	// WireAnthropic, WireGemini, WireDemo, or an outside adapter's own.
	Wire string
	// KeyEnv is the environment variable holding the API key; empty for a
	// provider that needs none (ollama, demo).
	KeyEnv string
	// AltKeyEnv is a second variable holding the key, read (and detected)
	// when KeyEnv is not set: GOOGLE_API_KEY for gemini.
	AltKeyEnv string
	// BaseEnv is the environment variable that overrides the base URL;
	// empty when only an explicit base URL does.
	BaseEnv string
	// DefaultBase is the base URL used when nothing else gives one; empty
	// means one must be given (compatible). The demo's is "offline".
	DefaultBase string
	// DefaultModel is the model used when none is given; empty means one
	// must be given.
	DefaultModel string
	// KeyRequired says whether the provider's own endpoint (the host of
	// DefaultBase) needs a key. Another base URL (a proxy, a gateway, a
	// test server) may do without one.
	KeyRequired bool
	// Detect says whether a set KeyEnv (or AltKeyEnv) picks this provider
	// when none is named, in the order of [All].
	Detect bool
	// Structured is the native structured-output mode the provider's API
	// offers (llm.ModelInfo.Structured of the models New builds): strict
	// json_schema for OpenAI's two APIs, a schema for Anthropic, Gemini and
	// the compatible services whose json_schema works, none (a typed answer
	// goes through a forced tool) for the others and for "compatible".
	Structured llm.StructuredMode
	// Description says in a few words what the provider is.
	Description string
	// Catalog is the provider the model catalog lists the provider's
	// models under, when it is not Name: "google" for gemini.
	Catalog string
	// Order places the provider in the table (and so in auto-detection
	// and the help texts): lower first, equal orders in registration
	// order. The providers agcore ships use 100 to 240 ([Order]); 0 puts
	// a provider after every one that has an order.
	Order int
	// Open builds the provider's model once [Provider.New] has resolved
	// the model, base URL and key. Required.
	Open func(s Settings) (llm.Model, error)
}

// Settings is what [Provider.Open] builds a model from: everything
// resolved, nothing left to read from the environment.
type Settings struct {
	// Model, BaseURL and APIKey are resolved: given, or the provider's
	// variables and defaults (APIKey may be empty where no key is needed).
	Model, BaseURL, APIKey string
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// IdleTimeout is how long a response may go without a byte; 0 means
	// the adapter's default.
	IdleTimeout time.Duration
	// Structured is the provider's Structured mode.
	Structured llm.StructuredMode
}

// CatalogName returns the provider the model catalog lists the
// provider's models under: Catalog, else Name.
func (p Provider) CatalogName() string {
	if p.Catalog != "" {
		return p.Catalog
	}
	return p.Name
}

var (
	mu    sync.RWMutex
	table []Provider
)

// Register adds p to the table, after the providers registered before it
// (auto-detection tries them in that order). An adapter package calls it
// from its init, as a database/sql driver does, so that importing the
// package is all a program (the agcore command, a server, a worker) needs
// to offer the provider; provider/builtin imports every adapter agcore
// ships. Register panics, at init, when p has no Name or Open, or its
// name is taken.
func Register(p Provider) {
	if p.Name == "" || p.Open == nil {
		panic("registry: Register needs a Name and an Open")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, q := range table {
		if q.Name == p.Name {
			panic("registry: Register called twice for provider " + p.Name)
		}
	}
	at := len(table)
	for i, q := range table {
		if rank(p) < rank(q) {
			at = i
			break
		}
	}
	table = slices.Insert(table, at, p)
}

func rank(p Provider) int {
	if p.Order == 0 {
		return int(^uint(0) >> 1)
	}
	return p.Order
}

// Order is the place of each provider agcore ships in the table
// ([Provider.Order]): OpenAI's two APIs, Anthropic, Gemini, the
// OpenAI-compatible services, any compatible server, the demo.
var Order = map[string]int{
	"openai": 100, "openai-responses": 110, "anthropic": 120, "gemini": 130,
	"deepseek": 140, "ollama": 150, "vllm": 160, "openrouter": 170, "groq": 180,
	"xai": 190, "qwen": 200, "moonshot": 210, "compatible": 230, "demo": 240,
}

// All returns the providers, in the order auto-detection tries them. The
// slice is a copy; changing it changes nothing here.
func All() []Provider {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Clone(table)
}

// Lookup returns the provider called name.
func Lookup(name string) (Provider, bool) {
	for _, p := range All() {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// Names returns the providers' names, in the order of [All].
func Names() []string {
	all := All()
	names := make([]string, len(all))
	for i, p := range all {
		names[i] = p.Name
	}
	return names
}

// Detect returns the first provider marked Detect whose key variable (or
// alternate) getenv finds set, and that variable's name; ok is false when
// none is.
func Detect(getenv func(string) string) (p Provider, env string, ok bool) {
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, p := range All() {
		if !p.Detect {
			continue
		}
		for _, e := range []string{p.KeyEnv, p.AltKeyEnv} {
			if e != "" && getenv(e) != "" {
				return p, e, true
			}
		}
	}
	return Provider{}, "", false
}

// Official reports whether base is the provider's own endpoint: the host
// of its DefaultBase. That is where a KeyRequired provider needs a key.
func (p Provider) Official(base string) bool {
	return p.DefaultBase != "" && httpx.SameHost(base, p.DefaultBase)
}

// KeyVars names the variables that hold the provider's key, as errors show
// them: "GEMINI_API_KEY (or GOOGLE_API_KEY)".
func (p Provider) KeyVars() string {
	if p.AltKeyEnv != "" {
		return p.KeyEnv + " (or " + p.AltKeyEnv + ")"
	}
	return p.KeyEnv
}

// Config is what New needs besides the provider's name. Every field is
// optional.
type Config struct {
	// Model is the model's id; empty means the provider's DefaultModel.
	Model string
	// BaseURL is the API's base URL; empty means the provider's BaseEnv
	// variable, else its DefaultBase.
	BaseURL string
	// APIKey is the key; empty means the provider's KeyEnv variable, else
	// its AltKeyEnv.
	APIKey string
	// Getenv looks the variables up (os.Getenv when nil). A caller that
	// has resolved the key and base URL itself (the agcore command, with
	// its config file) gives one that finds nothing.
	Getenv func(string) string
	// HTTPClient sends the requests (http.DefaultClient when nil).
	HTTPClient *http.Client
	// IdleTimeout is how long a response may go without a byte (the
	// adapters' default when 0).
	IdleTimeout time.Duration
}

// New builds the model of the provider called name; see [Provider.New].
func New(name string, c Config) (llm.Model, error) {
	p, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown provider %q: want one of %s", name, strings.Join(Names(), ", "))
	}
	return p.New(c)
}

// New builds the provider's model: its Open, given the model, base URL
// and key of c (or the provider's defaults and variables); the demo's
// Open gets only the model. It fails, before anything is sent, when
// the provider needs a model or a base URL and c gives none, and when the
// provider's own endpoint needs a key and none is set (an llm.ErrAuth
// error naming the variable).
func (p Provider) New(c Config) (llm.Model, error) {
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	model := c.Model
	if model == "" {
		model = p.DefaultModel
	}
	if p.Wire == WireDemo {
		return p.Open(Settings{Model: model})
	}
	if model == "" {
		return nil, fmt.Errorf("provider %s needs a model: give one (--model)", p.Name)
	}
	base := c.BaseURL
	if base == "" && p.BaseEnv != "" {
		base = getenv(p.BaseEnv)
	}
	if base == "" {
		base = p.DefaultBase
	}
	if base == "" {
		where := "--base-url"
		if p.BaseEnv != "" {
			where += " or " + p.BaseEnv
		}
		return nil, fmt.Errorf("provider %s needs a base URL: give one (%s), usually ending in /v1", p.Name, where)
	}
	key := c.APIKey
	for _, e := range []string{p.KeyEnv, p.AltKeyEnv} {
		if key == "" && e != "" {
			key = getenv(e)
		}
	}
	if key == "" && p.KeyRequired && p.Official(base) {
		return nil, &llm.Error{Kind: llm.KindAuth, Provider: p.Name, Message: "no API key: set " + p.KeyVars()}
	}
	return p.Open(Settings{Model: model, BaseURL: base, APIKey: key, HTTPClient: c.HTTPClient, IdleTimeout: c.IdleTimeout, Structured: p.Structured})
}
