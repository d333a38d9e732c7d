// Package catalog knows the context window and maximum output of current
// models, so an agent can compute its input budget
// (llm.ModelInfo.InputBudget: window − reserved output − safety margin)
// without being told.
//
// The built-in entries (checked on [AsOf]) cover OpenAI (gpt-4o and -mini,
// the gpt-4.1 family, the gpt-5 family up to gpt-5.2, o1, o3, o3-mini,
// o4-mini), Anthropic (Claude Opus, Sonnet and Haiku 4.x, Sonnet 3.7, Sonnet
// and Haiku 3.5, under the ids the API uses), DeepSeek (deepseek-chat,
// deepseek-reasoner and the V4 names) and common open models under their
// Ollama names (qwen2.5, qwen3, llama3.x, mistral, gemma). Dated snapshots
// and tags match their family's entry by prefix; see [Catalog.Lookup].
//
// An unknown model is reported as unknown: there is no silent guess of a
// huge window that would let requests overflow. Say the window yourself
// with [Register] (process-wide) or on a [Catalog] of your own (per agent),
// or set llm.ModelInfo directly.
//
// Ollama runs a model with a context of its own choosing (a few thousand
// tokens on small GPUs) and silently drops what does not fit, whatever the
// model supports. The entries here give the model's native window; set
// Ollama's context length (num_ctx, or OLLAMA_CONTEXT_LENGTH) to match, or
// register the smaller window you run with.
//
// This package imports only package llm and the standard library.
package catalog
