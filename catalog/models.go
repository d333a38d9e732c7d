package catalog

import "github.com/agcore/agcore/llm"

// AsOf is the date the built-in windows and output limits were checked
// against the providers' documentation.
const AsOf = "2026-11-30"

// PricesAsOf is the date the built-in prices were taken from the providers'
// pricing pages.
const PricesAsOf = "2026-11-30"

func entry(provider, name string, window, maxOut int, price *llm.Price) llm.ModelInfo {
	return llm.ModelInfo{Provider: provider, Name: name, ContextWindow: window, MaxOutputTokens: maxOut, Price: price}
}

func openai(name string, window, maxOut int, price *llm.Price) llm.ModelInfo {
	return entry("openai", name, window, maxOut, price)
}

// gpt5 models share a 400k window of which at most 272k may be input: the
// whole 128k of output is reserved, or the default quarter of the window
// would leave an input budget above what the API accepts.
func gpt5(name string, price *llm.Price) llm.ModelInfo {
	info := openai(name, 400_000, 128_000, price)
	info.ReservedOutput = 128_000
	return info
}

func anthropic(name string, window, maxOut int, price *llm.Price) llm.ModelInfo {
	return entry("anthropic", name, window, maxOut, price)
}

func deepseek(name string, window, maxOut int, price *llm.Price) llm.ModelInfo {
	return entry("deepseek", name, window, maxOut, price)
}

func google(name string, window, maxOut int, price *llm.Price) llm.ModelInfo {
	return entry("google", name, window, maxOut, price)
}

// ollama entries give the model's native window; see the package
// documentation about Ollama's own, smaller default. They have no price:
// the models run on the user's hardware.
func ollama(name string, window, maxOut int) llm.ModelInfo {
	return entry("ollama", name, window, maxOut, nil)
}

// OpenAI bills cache writes as ordinary input.
func openaiPrice(in, cached, out float64) *llm.Price {
	return &llm.Price{Input: in, Output: out, CacheRead: cached, CacheWrite: in}
}

// Anthropic bills a 5-minute cache write at 1.25× input and a read at 0.1×;
// llm.Usage does not say which cache duration was written, so writes are
// priced at the 5-minute rate (a 1-hour write costs 2× input).
func anthropicPrice(in, out float64) *llm.Price {
	return &llm.Price{Input: in, Output: out, CacheRead: in / 10, CacheWrite: in * 1.25}
}

// sonnetLong is Claude Sonnet 4 and 4.5 with the 1M-token beta: a call with
// more than 200k input tokens is billed at $6/$22.50 for all its tokens.
func sonnetLong() *llm.Price {
	p := anthropicPrice(3, 15)
	p.LongContext, p.LongContextThreshold = anthropicPrice(6, 22.5), 200_000
	return p
}

// DeepSeek caches automatically; a miss is billed as ordinary input.
// deepseek-chat and deepseek-reasoner are at their last published (V3.2)
// price. The V4 names bill off-peak hours at half; the table holds the
// peak price, an upper bound.
func deepseekPrice(miss, hit, out float64) *llm.Price {
	return &llm.Price{Input: miss, Output: out, CacheRead: hit, CacheWrite: miss}
}

// Gemini's cached input (implicit or explicit context caching) is billed
// at the context-caching price; writing the cache costs input (the hourly
// storage of an explicit cache is not per call, and not modelled).
func geminiPrice(in, cached, out float64) *llm.Price {
	return &llm.Price{Input: in, Output: out, CacheRead: cached, CacheWrite: in}
}

// geminiTiered is a Gemini Pro price: a call whose prompt exceeds 200k
// tokens is billed at the second rates for all its tokens.
func geminiTiered(in, cached, out, inLong, cachedLong, outLong float64) *llm.Price {
	p := geminiPrice(in, cached, out)
	p.LongContext, p.LongContextThreshold = geminiPrice(inLong, cachedLong, outLong), 200_000
	return p
}

// builtin returns the catalog's table. Sources, for the limits: OpenAI's
// model pages (developers.openai.com/api/docs/models), Anthropic's models
// overview and per-model pages
// (platform.claude.com/docs/en/about-claude/models), DeepSeek's "Models &
// Pricing" (api-docs.deepseek.com/quick_start/pricing), and the model cards
// in Ollama's library for the open models. Prices, USD per million tokens,
// taken on PricesAsOf from developers.openai.com/api/docs/pricing (and the
// per-model pages), platform.claude.com/docs/en/about-claude/pricing, and
// api-docs.deepseek.com/quick_start/pricing: OpenAI's as input, cached
// input, output (gpt-4-turbo has no prompt caching; chatgpt-4o-latest has
// no published price); Anthropic's as input, output, the cache prices
// following from input; DeepSeek's as cache miss, cache hit, output.
func builtin() []llm.ModelInfo {
	return []llm.ModelInfo{
		// OpenAI.
		openai("gpt-4o", 128_000, 16_384, openaiPrice(2.50, 1.25, 10.00)),
		openai("gpt-4o-mini", 128_000, 16_384, openaiPrice(0.15, 0.075, 0.60)),
		openai("chatgpt-4o-latest", 128_000, 16_384, nil),
		openai("gpt-4.1", 1_047_576, 32_768, openaiPrice(2.00, 0.50, 8.00)),
		openai("gpt-4.1-mini", 1_047_576, 32_768, openaiPrice(0.40, 0.10, 1.60)),
		openai("gpt-4.1-nano", 1_047_576, 32_768, openaiPrice(0.10, 0.025, 0.40)),
		gpt5("gpt-5", openaiPrice(1.25, 0.125, 10.00)),
		gpt5("gpt-5-mini", openaiPrice(0.25, 0.025, 2.00)),
		gpt5("gpt-5-nano", openaiPrice(0.05, 0.005, 0.40)),
		gpt5("gpt-5.1", openaiPrice(1.25, 0.125, 10.00)),
		gpt5("gpt-5.2", openaiPrice(1.75, 0.175, 14.00)),
		openai("gpt-5-chat-latest", 128_000, 16_384, openaiPrice(1.25, 0.125, 10.00)),
		openai("o1", 200_000, 100_000, openaiPrice(15.00, 7.50, 60.00)),
		openai("o3", 200_000, 100_000, openaiPrice(2.00, 0.50, 8.00)),
		openai("o3-mini", 200_000, 100_000, openaiPrice(1.10, 0.55, 4.40)),
		openai("o4-mini", 200_000, 100_000, openaiPrice(1.10, 0.275, 4.40)),
		openai("gpt-4-turbo", 128_000, 4_096, openaiPrice(10.00, 10.00, 30.00)),
		openai("gpt-3.5-turbo", 16_385, 4_096, openaiPrice(0.50, 0.50, 1.50)),

		// Anthropic, as the API spells the ids (dated snapshots and the
		// "-latest" and "-0" aliases match by prefix).
		anthropic("claude-opus-4-8", 1_000_000, 128_000, anthropicPrice(5, 25)),
		anthropic("claude-opus-4-7", 1_000_000, 128_000, anthropicPrice(5, 25)),
		anthropic("claude-opus-4-6", 1_000_000, 128_000, anthropicPrice(5, 25)),
		anthropic("claude-opus-4-5", 200_000, 64_000, anthropicPrice(5, 25)),
		anthropic("claude-opus-4-1", 200_000, 32_000, anthropicPrice(15, 75)),
		anthropic("claude-opus-4", 200_000, 32_000, anthropicPrice(15, 75)), // claude-opus-4-0, claude-opus-4-20250514
		anthropic("claude-sonnet-4-6", 1_000_000, 128_000, anthropicPrice(3, 15)),
		anthropic("claude-sonnet-4-5", 200_000, 64_000, sonnetLong()), // 1M with the context-1m beta: Add it
		anthropic("claude-sonnet-4", 200_000, 64_000, sonnetLong()),   // claude-sonnet-4-0, claude-sonnet-4-20250514
		anthropic("claude-haiku-4-5", 200_000, 64_000, anthropicPrice(1, 5)),
		anthropic("claude-3-7-sonnet", 200_000, 64_000, anthropicPrice(3, 15)),
		anthropic("claude-3-5-sonnet", 200_000, 8_192, anthropicPrice(3, 15)),
		anthropic("claude-3-5-haiku", 200_000, 8_192, anthropicPrice(0.80, 4)),

		// DeepSeek. deepseek-chat and deepseek-reasoner keep the limits
		// documented for them (128k window); DeepSeek now serves them with its
		// V4 Flash model, whose own names have a 1M window.
		deepseek("deepseek-chat", 128_000, 8_192, deepseekPrice(0.28, 0.028, 0.42)),
		deepseek("deepseek-reasoner", 128_000, 65_536, deepseekPrice(0.28, 0.028, 0.42)),
		deepseek("deepseek-flash", 1_000_000, 384_000, deepseekPrice(0.30, 0.006, 1.20)),
		deepseek("deepseek-v4-flash", 1_000_000, 384_000, deepseekPrice(0.30, 0.006, 1.20)),
		deepseek("deepseek-v4-pro", 1_000_000, 384_000, deepseekPrice(1.32, 0.044, 3.96)),

		// Google, as the Gemini API names the models (previews and dated
		// versions match by prefix: gemini-3-pro matches
		// gemini-3-pro-preview). Limits from the model pages
		// (ai.google.dev/gemini-api/docs/models: 1,048,576 input and 65,536
		// output tokens, 8,192 output for 2.0 Flash); prices (standard
		// tier, USD per million tokens: input, context caching, output;
		// thinking is billed as output) from
		// ai.google.dev/gemini-api/docs/pricing.
		google("gemini-3-pro", 1_048_576, 65_536, geminiTiered(2.00, 0.20, 12.00, 4.00, 0.40, 18.00)),
		google("gemini-3-flash", 1_048_576, 65_536, geminiPrice(0.50, 0.05, 3.00)),
		google("gemini-2.5-pro", 1_048_576, 65_536, geminiTiered(1.25, 0.125, 10.00, 2.50, 0.25, 15.00)),
		google("gemini-2.5-flash", 1_048_576, 65_536, geminiPrice(0.30, 0.03, 2.50)),
		google("gemini-2.5-flash-lite", 1_048_576, 65_536, geminiPrice(0.10, 0.01, 0.40)),
		google("gemini-2.0-flash", 1_048_576, 8_192, geminiPrice(0.10, 0.025, 0.40)),

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
}
