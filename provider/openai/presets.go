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
func preset(provider, keyEnv, baseEnv, defaultBase, defaultModel string, keyRequired bool, structured llm.StructuredMode) Option {
	return func(c *config) {
		c.structured = &structured
		c.svc = adapter.Service{Provider: provider, BaseURL: defaultBase, Model: defaultModel}
		if keyEnv != "" {
			c.svc.KeyEnv = []string{keyEnv}
		}
		if baseEnv != "" {
			c.svc.BaseEnv = []string{baseEnv}
		}
		c.keyRequired = keyRequired
	}
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
	p := preset("deepseek", "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "https://api.deepseek.com", "deepseek-chat", true, llm.StructuredNone)
	return func(c *config) {
		p(c)
		c.sendReasoning = true
	}
}

// Ollama configures a local Ollama server: base http://localhost:11434/v1,
// default model llama3.2, no API key, no environment variables.
func Ollama() Option {
	return preset("ollama", "", "", "http://localhost:11434/v1", "llama3.2", false, llm.StructuredSchema)
}

// VLLM configures a local vLLM server (vllm serve): base
// http://localhost:8000/v1, no environment variables; use WithAPIKey if the
// server was started with --api-key.
func VLLM() Option {
	return preset("vllm", "", "", "http://localhost:8000/v1", "", false, llm.StructuredSchema)
}

// OpenRouter configures openrouter.ai: OPENROUTER_API_KEY, base
// https://openrouter.ai/api/v1. Models are named "vendor/model"
// ("openai/gpt-5", "deepseek/deepseek-r1"). Its "reasoning" deltas map to
// thinking blocks; its "reasoning_details" are not kept.
func OpenRouter() Option {
	return preset("openrouter", "OPENROUTER_API_KEY", "", "https://openrouter.ai/api/v1", "", true, llm.StructuredSchema)
}

// Qwen configures Alibaba Cloud Model Studio (DashScope) in its
// OpenAI-compatible mode: DASHSCOPE_API_KEY, base
// https://dashscope-intl.aliyuncs.com/compatible-mode/v1 (international);
// in mainland China use WithBaseURL("https://dashscope.aliyuncs.com/compatible-mode/v1").
func Qwen() Option {
	return preset("qwen", "DASHSCOPE_API_KEY", "", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "", true, llm.StructuredNone)
}

// Moonshot configures Moonshot AI (Kimi): MOONSHOT_API_KEY, base
// https://api.moonshot.ai/v1; in mainland China use
// WithBaseURL("https://api.moonshot.cn/v1").
func Moonshot() Option {
	return preset("moonshot", "MOONSHOT_API_KEY", "", "https://api.moonshot.ai/v1", "", true, llm.StructuredNone)
}

// Groq configures GroqCloud: GROQ_API_KEY, base https://api.groq.com/openai/v1.
func Groq() Option {
	return preset("groq", "GROQ_API_KEY", "", "https://api.groq.com/openai/v1", "", true, llm.StructuredSchema)
}

// XAI configures xAI (Grok): XAI_API_KEY, base https://api.x.ai/v1.
func XAI() Option {
	return preset("xai", "XAI_API_KEY", "", "https://api.x.ai/v1", "", true, llm.StructuredSchema)
}
