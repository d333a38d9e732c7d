package catalog

import "github.com/agcore/agcore/llm"

// AsOf is the date the built-in entries were checked against the
// providers' documentation.
const AsOf = "2026-11-30"

func openai(name string, window, maxOut int) llm.ModelInfo {
	return llm.ModelInfo{Provider: "openai", Name: name, ContextWindow: window, MaxOutputTokens: maxOut}
}

// gpt5 models share a 400k window of which at most 272k may be input: the
// whole 128k of output is reserved, or the default quarter of the window
// would leave an input budget above what the API accepts.
func gpt5(name string) llm.ModelInfo {
	info := openai(name, 400_000, 128_000)
	info.ReservedOutput = 128_000
	return info
}

func anthropic(name string, window, maxOut int) llm.ModelInfo {
	return llm.ModelInfo{Provider: "anthropic", Name: name, ContextWindow: window, MaxOutputTokens: maxOut}
}

func deepseek(name string, window, maxOut int) llm.ModelInfo {
	return llm.ModelInfo{Provider: "deepseek", Name: name, ContextWindow: window, MaxOutputTokens: maxOut}
}

// ollama entries give the model's native window; see the package
// documentation about Ollama's own, smaller default.
func ollama(name string, window, maxOut int) llm.ModelInfo {
	return llm.ModelInfo{Provider: "ollama", Name: name, ContextWindow: window, MaxOutputTokens: maxOut}
}

// builtin is the catalog's table. Sources: OpenAI's model pages
// (developers.openai.com/api/docs/models), Anthropic's models overview and
// per-model pages (platform.claude.com/docs/en/about-claude/models),
// DeepSeek's "Models & Pricing" (api-docs.deepseek.com/quick_start/pricing),
// and the model cards in Ollama's library for the open models.
var builtin = []llm.ModelInfo{
	// OpenAI.
	openai("gpt-4o", 128_000, 16_384),
	openai("gpt-4o-mini", 128_000, 16_384),
	openai("chatgpt-4o-latest", 128_000, 16_384),
	openai("gpt-4.1", 1_047_576, 32_768),
	openai("gpt-4.1-mini", 1_047_576, 32_768),
	openai("gpt-4.1-nano", 1_047_576, 32_768),
	gpt5("gpt-5"),
	gpt5("gpt-5-mini"),
	gpt5("gpt-5-nano"),
	gpt5("gpt-5.1"),
	gpt5("gpt-5.2"),
	openai("gpt-5-chat-latest", 128_000, 16_384),
	openai("o1", 200_000, 100_000),
	openai("o3", 200_000, 100_000),
	openai("o3-mini", 200_000, 100_000),
	openai("o4-mini", 200_000, 100_000),
	openai("gpt-4-turbo", 128_000, 4_096),
	openai("gpt-3.5-turbo", 16_385, 4_096),

	// Anthropic, as the API spells the ids (dated snapshots and the
	// "-latest" and "-0" aliases match by prefix).
	anthropic("claude-opus-4-8", 1_000_000, 128_000),
	anthropic("claude-opus-4-7", 1_000_000, 128_000),
	anthropic("claude-opus-4-6", 1_000_000, 128_000),
	anthropic("claude-opus-4-5", 200_000, 64_000),
	anthropic("claude-opus-4-1", 200_000, 32_000),
	anthropic("claude-opus-4", 200_000, 32_000), // claude-opus-4-0, claude-opus-4-20250514
	anthropic("claude-sonnet-4-6", 1_000_000, 128_000),
	anthropic("claude-sonnet-4-5", 200_000, 64_000), // 1M with the context-1m beta: register it
	anthropic("claude-sonnet-4", 200_000, 64_000),   // claude-sonnet-4-0, claude-sonnet-4-20250514
	anthropic("claude-haiku-4-5", 200_000, 64_000),
	anthropic("claude-3-7-sonnet", 200_000, 64_000),
	anthropic("claude-3-5-sonnet", 200_000, 8_192),
	anthropic("claude-3-5-haiku", 200_000, 8_192),

	// DeepSeek. deepseek-chat and deepseek-reasoner keep the limits
	// documented for them (128k window); DeepSeek now serves them with its
	// V4 Flash model, whose own names have a 1M window.
	deepseek("deepseek-chat", 128_000, 8_192),
	deepseek("deepseek-reasoner", 128_000, 65_536),
	deepseek("deepseek-flash", 1_000_000, 384_000),
	deepseek("deepseek-v4-flash", 1_000_000, 384_000),
	deepseek("deepseek-v4-pro", 1_000_000, 384_000),

	// Open models under their Ollama names (tags such as ":7b" match by
	// prefix). Output is limited only by the window; 8k is the usual cap.
	ollama("qwen2.5", 32_768, 8_192),
	ollama("qwen2.5-coder", 32_768, 8_192),
	ollama("qwen3", 40_960, 8_192),
	ollama("llama3", 8_192, 2_048),
	ollama("llama3.1", 131_072, 8_192),
	ollama("llama3.2", 131_072, 8_192),
	ollama("llama3.3", 131_072, 8_192),
	ollama("mistral", 32_768, 8_192),
	ollama("mistral-nemo", 131_072, 8_192),
	ollama("mistral-small", 32_768, 8_192),
	ollama("gemma2", 8_192, 4_096),
	ollama("gemma3", 131_072, 8_192),
	ollama("gemma3:1b", 32_768, 8_192),
}
