// Package catalog knows the context window, maximum output and price of
// current models, so an agent can compute its input budget
// (llm.ModelInfo.InputBudget: window − reserved output − safety margin) and
// the cost of a call (llm.ModelInfo.Price) without being told.
//
// A [Catalog] is a value, and nothing here is process-wide: [Default]
// returns a new catalog holding the built-in entries every time it is
// called (they are shared read-only, so this is cheap), [Catalog.Add]
// extends or overrides one catalog, and [Catalog.Lookup] and
// [Catalog.LookupFor] read it. The zero Catalog is empty. Give the provider
// adapters the catalog you extended (openai.WithCatalog,
// anthropic.WithCatalog, gemini.WithCatalog); their Info reads it.
//
// The built-in entries (limits checked on [AsOf], prices taken on
// [PricesAsOf]) cover OpenAI (gpt-4o and -mini, the gpt-4.1 family, the
// gpt-5 family up to gpt-5.2, o1, o3, o3-mini, o4-mini), Anthropic (Claude
// Opus, Sonnet and Haiku 4.x, Sonnet 3.7, Sonnet and Haiku 3.5, under the
// ids the API uses), DeepSeek (deepseek-chat, deepseek-reasoner and the V4
// names), Google (Gemini 3 Pro and Flash, 2.5 Pro, Flash and Flash-Lite,
// 2.0 Flash) and common open models under their Ollama names (qwen2.5, qwen3,
// llama3.x, mistral, gemma; limits only, no price). Dated snapshots and
// tags match their family's entry by prefix; see [Catalog.Lookup].
//
// # Model names
//
// [Normalize] is the one place agcore parses a model id: lower case,
// routing prefixes ("openai/" on OpenRouter, "anthropic." on Bedrock)
// removed. [InFamily] tests a model family on the normalized id; the token
// counters (package compact) and the OpenAI adapter's reasoning-model
// detection use it.
//
// # Prices and providers
//
// Every entry records the Provider that sells the model at its Price. A
// price applies only where that provider serves the model:
// [Catalog.LookupFor] (what the adapters call, with their own identity)
// keeps the window and maximum output of an entry for another provider but
// drops its price, so gpt-4o behind OpenRouter, a Llama on Ollama or
// anything behind a custom base URL has an unknown cost rather than a
// cloud provider's. Add an entry for the serving provider (a zero Price for
// a free local model) to price it. Costs are unknown, never guessed as
// zero. Prices change; the table is a snapshot. Long-context surcharges are
// modelled where the provider publishes them for the listed models (Claude
// Sonnet 4 and 4.5, Gemini 2.5 Pro and 3 Pro above 200k input tokens);
// batch discounts, priority tiers and DeepSeek's off-peak discount are not
// (its peak price is used, an upper bound).
//
// An unknown model is reported as unknown: there is no silent guess of a
// huge window that would let requests overflow. Say the window yourself
// with [Catalog.Add], or set llm.ModelInfo directly.
//
// Ollama runs a model with a context of its own choosing (a few thousand
// tokens on small GPUs) and silently drops what does not fit, whatever the
// model supports. The entries here give the model's native window; set
// Ollama's context length (num_ctx, or OLLAMA_CONTEXT_LENGTH) to match, or
// add the smaller window you run with.
//
// This package imports only package llm and the standard library.
package catalog
