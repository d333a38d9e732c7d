package openai

import (
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/internal/adapter"
)

// A preset points New at one OpenAI-compatible service: its provider name
// (in errors and Info), the environment variables its key and base URL are
// read from, and its default base URL. Give a preset first; options after it
// override it:
//
//	m := openai.New(openai.DeepSeek(), openai.WithModel("deepseek-chat"))
//	m := openai.New(openai.Ollama(), openai.WithModel("llama3.2"))
//
// Any other compatible server works without a preset:
//
//	m := openai.New(openai.WithBaseURL("http://localhost:1234/v1"), openai.WithModel("local"))
//
// A preset whose service needs a key (every one but Ollama and VLLM) makes
// calls to its own endpoint fail before anything is sent when no key is
// set, with an llm.ErrAuth error naming the variable; another base URL
// given with WithBaseURL or the base-URL variable goes without a key.
//
// Each preset also says which structured-output mode its service offers
// (llm.ModelInfo.Structured): json_schema for Ollama, vLLM, OpenRouter,
// Groq and xAI; none (a typed answer goes through a forced tool) for
// DeepSeek, Qwen and Moonshot, which document only json_object.
func preset(name string) Option {
	f := presetNamed(name)
	return func(c *config) {
		structured := f.structured
		c.structured = &structured
		c.svc = adapter.Service{Provider: f.name, BaseURL: f.defaultBase, Model: f.defaultModel}
		if f.keyEnv != "" {
			c.svc.KeyEnv = []string{f.keyEnv}
		}
		if f.baseEnv != "" {
			c.svc.BaseEnv = []string{f.baseEnv}
		}
		c.keyRequired = f.keyRequired
		c.sendReasoning = f.sendReasoning
	}
}

// presetFacts are one OpenAI-compatible service's facts, written once:
// the preset's Option and its provider-registry entry (register.go) are
// both made from them.
type presetFacts struct {
	name, keyEnv, baseEnv, defaultBase, defaultModel string
	keyRequired, detect                              bool
	structured                                       llm.StructuredMode
	description                                      string
	sendReasoning                                    bool // DeepSeek's reasoning_content goes back
}

// presets lists the services, in the order the registry's auto-detection
// tries them.
var presets = []presetFacts{
	{"deepseek", "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "https://api.deepseek.com", "deepseek-chat", true, true, llm.StructuredNone, "DeepSeek", true},
	{"ollama", "", "", "http://localhost:11434/v1", "llama3.2", false, false, llm.StructuredSchema, "a local Ollama server", false},
	{"vllm", "VLLM_API_KEY", "", "http://localhost:8000/v1", "", false, false, llm.StructuredSchema, "a local vLLM server (vllm serve)", false},
	{"openrouter", "OPENROUTER_API_KEY", "", "https://openrouter.ai/api/v1", "", true, true, llm.StructuredSchema, "OpenRouter (models named vendor/model)", false},
	{"groq", "GROQ_API_KEY", "", "https://api.groq.com/openai/v1", "", true, true, llm.StructuredSchema, "GroqCloud", false},
	{"xai", "XAI_API_KEY", "", "https://api.x.ai/v1", "", true, true, llm.StructuredSchema, "xAI (Grok)", false},
	{"qwen", "DASHSCOPE_API_KEY", "", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "", true, true, llm.StructuredNone, "Alibaba Cloud Model Studio (Qwen)", false},
	{"moonshot", "MOONSHOT_API_KEY", "", "https://api.moonshot.ai/v1", "", true, true, llm.StructuredNone, "Moonshot AI (Kimi)", false},
}

func presetNamed(name string) presetFacts {
	for _, f := range presets {
		if f.name == name {
			return f
		}
	}
	panic("openai: no preset " + name)
}

// DeepSeek configures api.deepseek.com: DEEPSEEK_API_KEY, DEEPSEEK_BASE_URL,
// default base https://api.deepseek.com (DeepSeek serves the same API under
// /v1 as well), default model deepseek-chat.
//
// DeepSeek's thinking models return their reasoning as "reasoning_content"
// (mapped to llm.Thinking blocks) and require it back during a tool loop:
// between two user messages, if the model called a tool, every assistant
// message of that span must carry its reasoning_content in all later
// requests, or the API answers 400 ("Missing reasoning_content field").
// With this preset the adapter does exactly that: assistant messages in a
// span with tool calls carry their thinking text ("" when they had none)
// and a string content; thinking of spans without tool calls is left out,
// which DeepSeek documents as ignored anyway. Cache hits
// (prompt_cache_hit_tokens) map to llm.Usage.CachedInputTokens.
func DeepSeek() Option {
	return preset("deepseek")
}

// Ollama configures a local Ollama server: base http://localhost:11434/v1,
// default model llama3.2, no API key, no environment variables.
func Ollama() Option {
	return preset("ollama")
}

// VLLM configures a local vLLM server (vllm serve): base
// http://localhost:8000/v1; the key, when the server was started with
// --api-key, from VLLM_API_KEY (or WithAPIKey); none is needed otherwise.
func VLLM() Option {
	return preset("vllm")
}

// OpenRouter configures openrouter.ai: OPENROUTER_API_KEY, base
// https://openrouter.ai/api/v1. Models are named "vendor/model"
// ("openai/gpt-5", "deepseek/deepseek-r1"). Its "reasoning" deltas map to
// thinking blocks; its "reasoning_details" are not kept.
func OpenRouter() Option {
	return preset("openrouter")
}

// Qwen configures Alibaba Cloud Model Studio (DashScope) in its
// OpenAI-compatible mode: DASHSCOPE_API_KEY, base
// https://dashscope-intl.aliyuncs.com/compatible-mode/v1 (international);
// in mainland China use WithBaseURL("https://dashscope.aliyuncs.com/compatible-mode/v1").
func Qwen() Option {
	return preset("qwen")
}

// Moonshot configures Moonshot AI (Kimi): MOONSHOT_API_KEY, base
// https://api.moonshot.ai/v1; in mainland China use
// WithBaseURL("https://api.moonshot.cn/v1").
func Moonshot() Option {
	return preset("moonshot")
}

// Groq configures GroqCloud: GROQ_API_KEY, base https://api.groq.com/openai/v1.
func Groq() Option {
	return preset("groq")
}

// XAI configures xAI (Grok): XAI_API_KEY, base https://api.x.ai/v1.
func XAI() Option {
	return preset("xai")
}
