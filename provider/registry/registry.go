package registry

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/anthropic"
	"github.com/agcore/agcore/provider/demo"
	"github.com/agcore/agcore/provider/gemini"
	"github.com/agcore/agcore/provider/openai"
	"github.com/agcore/agcore/provider/openai/responses"
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
	// WireAnthropic, WireGemini or WireDemo.
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
	// Preset is the provider/openai preset of an OpenAI-compatible
	// service (nil for OpenAI itself, compatible and the other wires).
	Preset func() openai.Option
	// Structured is the native structured-output mode the provider's API
	// offers (llm.ModelInfo.Structured of the models New builds): strict
	// json_schema for OpenAI's two APIs, a schema for Anthropic, Gemini and
	// the compatible services whose json_schema works, none (a typed answer
	// goes through a forced tool) for the others and for "compatible".
	Structured llm.StructuredMode
	// Description says in a few words what the provider is.
	Description string
}

// table lists the providers in the order auto-detection tries them.
var table = []Provider{
	{Name: "openai", Wire: WireOpenAI, Structured: llm.StructuredStrict, KeyEnv: "OPENAI_API_KEY", BaseEnv: "OPENAI_BASE_URL", DefaultBase: openai.DefaultBaseURL, DefaultModel: openai.DefaultModel,
		KeyRequired: true, Detect: true, Description: "OpenAI (Chat Completions)"},
	{Name: "openai-responses", Wire: WireResponses, Structured: llm.StructuredStrict, KeyEnv: "OPENAI_API_KEY", BaseEnv: "OPENAI_BASE_URL", DefaultBase: responses.DefaultBaseURL, DefaultModel: responses.DefaultModel,
		KeyRequired: true, Description: "OpenAI through the Responses API ({base}/responses)"},
	{Name: "anthropic", Wire: WireAnthropic, Structured: llm.StructuredSchema, KeyEnv: "ANTHROPIC_API_KEY", BaseEnv: "ANTHROPIC_BASE_URL", DefaultBase: anthropic.DefaultBaseURL, DefaultModel: anthropic.DefaultModel,
		KeyRequired: true, Detect: true, Description: "Anthropic (Claude, Messages API)"},
	{Name: "gemini", Wire: WireGemini, Structured: llm.StructuredSchema, KeyEnv: "GEMINI_API_KEY", AltKeyEnv: "GOOGLE_API_KEY", BaseEnv: "GOOGLE_GEMINI_BASE_URL", DefaultBase: gemini.DefaultBaseURL, DefaultModel: gemini.DefaultModel,
		KeyRequired: true, Detect: true, Description: "Google Gemini API"},
	{Name: "deepseek", Wire: WireOpenAI, Structured: llm.StructuredNone, KeyEnv: "DEEPSEEK_API_KEY", BaseEnv: "DEEPSEEK_BASE_URL", DefaultBase: "https://api.deepseek.com", DefaultModel: "deepseek-chat",
		KeyRequired: true, Detect: true, Preset: openai.DeepSeek, Description: "DeepSeek"},
	{Name: "ollama", Wire: WireOpenAI, Structured: llm.StructuredSchema, DefaultBase: "http://localhost:11434/v1", DefaultModel: "llama3.2",
		Preset: openai.Ollama, Description: "a local Ollama server"},
	{Name: "vllm", Wire: WireOpenAI, Structured: llm.StructuredSchema, KeyEnv: "VLLM_API_KEY", DefaultBase: "http://localhost:8000/v1",
		Preset: openai.VLLM, Description: "a local vLLM server (vllm serve)"},
	{Name: "openrouter", Wire: WireOpenAI, Structured: llm.StructuredSchema, KeyEnv: "OPENROUTER_API_KEY", DefaultBase: "https://openrouter.ai/api/v1",
		KeyRequired: true, Detect: true, Preset: openai.OpenRouter, Description: "OpenRouter (models named vendor/model)"},
	{Name: "groq", Wire: WireOpenAI, Structured: llm.StructuredSchema, KeyEnv: "GROQ_API_KEY", DefaultBase: "https://api.groq.com/openai/v1",
		KeyRequired: true, Detect: true, Preset: openai.Groq, Description: "GroqCloud"},
	{Name: "xai", Wire: WireOpenAI, Structured: llm.StructuredSchema, KeyEnv: "XAI_API_KEY", DefaultBase: "https://api.x.ai/v1",
		KeyRequired: true, Detect: true, Preset: openai.XAI, Description: "xAI (Grok)"},
	{Name: "qwen", Wire: WireOpenAI, Structured: llm.StructuredNone, KeyEnv: "DASHSCOPE_API_KEY", DefaultBase: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
		KeyRequired: true, Detect: true, Preset: openai.Qwen, Description: "Alibaba Cloud Model Studio (Qwen)"},
	{Name: "moonshot", Wire: WireOpenAI, Structured: llm.StructuredNone, KeyEnv: "MOONSHOT_API_KEY", DefaultBase: "https://api.moonshot.ai/v1",
		KeyRequired: true, Detect: true, Preset: openai.Moonshot, Description: "Moonshot AI (Kimi)"},
	{Name: "compatible", Wire: WireOpenAI, Structured: llm.StructuredNone, KeyEnv: "OPENAI_API_KEY", BaseEnv: "OPENAI_BASE_URL",
		Description: "any OpenAI-compatible server (LM Studio, llama.cpp, a gateway, ...)"},
	{Name: "demo", Wire: WireDemo, Structured: llm.StructuredSchema, DefaultBase: "offline", DefaultModel: demo.Name,
		Description: "the offline scripted model of agcore demo (not a language model)"},
}

// All returns the providers, in the order auto-detection tries them. The
// slice is a copy; changing it changes nothing here.
func All() []Provider { return slices.Clone(table) }

// Lookup returns the provider called name.
func Lookup(name string) (Provider, bool) {
	for _, p := range table {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// Names returns the providers' names, in the order of [All].
func Names() []string {
	names := make([]string, len(table))
	for i, p := range table {
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
	for _, p := range table {
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

// New builds the provider's model: the adapter of its wire, with its
// preset, the model, base URL and key of c (or the provider's defaults and
// variables), or the demo model. It fails, before anything is sent, when
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
		return &demo.Model{}, nil
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
	switch p.Wire {
	case WireAnthropic:
		opts := []anthropic.Option{anthropic.WithAPIKey(key), anthropic.WithBaseURL(base), anthropic.WithModel(model)}
		if c.HTTPClient != nil {
			opts = append(opts, anthropic.WithHTTPClient(c.HTTPClient))
		}
		if c.IdleTimeout > 0 {
			opts = append(opts, anthropic.WithIdleTimeout(c.IdleTimeout))
		}
		return anthropic.New(opts...), nil
	case WireGemini:
		opts := []gemini.Option{gemini.WithAPIKey(key), gemini.WithBaseURL(base), gemini.WithModel(model)}
		if c.HTTPClient != nil {
			opts = append(opts, gemini.WithHTTPClient(c.HTTPClient))
		}
		if c.IdleTimeout > 0 {
			opts = append(opts, gemini.WithIdleTimeout(c.IdleTimeout))
		}
		return gemini.New(opts...), nil
	case WireResponses:
		opts := []responses.Option{responses.WithAPIKey(key), responses.WithBaseURL(base), responses.WithModel(model)}
		if c.HTTPClient != nil {
			opts = append(opts, responses.WithHTTPClient(c.HTTPClient))
		}
		if c.IdleTimeout > 0 {
			opts = append(opts, responses.WithIdleTimeout(c.IdleTimeout))
		}
		return responses.New(opts...), nil
	case WireOpenAI:
		var opts []openai.Option
		if p.Preset != nil {
			opts = append(opts, p.Preset())
		}
		opts = append(opts, openai.WithAPIKey(key), openai.WithBaseURL(base), openai.WithModel(model), openai.WithStructuredOutput(p.Structured))
		if c.HTTPClient != nil {
			opts = append(opts, openai.WithHTTPClient(c.HTTPClient))
		}
		if c.IdleTimeout > 0 {
			opts = append(opts, openai.WithIdleTimeout(c.IdleTimeout))
		}
		return openai.New(opts...), nil
	}
	return nil, fmt.Errorf("provider %s: unknown wire %q", p.Name, p.Wire)
}
