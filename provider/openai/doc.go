// Package openai is the llm.Model adapter for the OpenAI Chat Completions
// API and every server that speaks it: OpenAI, DeepSeek, Ollama, vLLM,
// OpenRouter, Qwen (DashScope), Moonshot, Groq, xAI, Azure OpenAI and other
// gateways.
//
//	m := openai.New()                                   // OPENAI_API_KEY, OPENAI_BASE_URL; gpt-4.1-mini (DefaultModel)
//	m := openai.New(openai.DeepSeek())                  // DEEPSEEK_API_KEY, DEEPSEEK_BASE_URL; deepseek-chat
//	m := openai.New(openai.Ollama(), openai.WithModel("qwen3"))
//	m := openai.New(openai.WithBaseURL("http://gpu-box:8000/v1"), openai.WithModel("local"))
//
// Requests go to {base}/chat/completions, as the official SDKs send them.
// Without a key, a call to the service's own endpoint fails before
// anything is sent, with an llm.ErrAuth error naming the key's variable; a
// local server or a gateway at another base URL is called without one.
// Package provider/registry names each preset for the agcore command.
//
// # Requests
//
// System messages are sent with role "system" (their text blocks joined).
// A user message that is only text is sent as a string; otherwise as parts:
// text, image_url (inline bytes as a data: URL, with Detail), input_audio
// (wav or mp3, inline only), and file (PDFs, inline or by uploaded file id;
// an inline text document becomes a text part); anything else is a
// KindInvalidRequest error. Assistant messages carry their text and their
// tool calls (arguments as a JSON string). Tool results, whether messages
// with llm.RoleTool or llm.ToolResult blocks nested in a user message, are
// sent as role "tool" messages with their tool_call_id; they hold text only.
// Chat Completions has no error flag for tool results, so an error result's
// text is prefixed with "Error: " (unless it already starts with "error").
//
// Thinking is not sent back, except to servers that require it (see
// [DeepSeek] and [WithReasoningContent]); signatures, redacted thinking and
// extension blocks have no place in this API and are never sent.
//
// Tools are sent as functions; ToolChoice as "none", "required" or a named
// function (auto is the server's default and is not sent). MaxTokens goes
// in max_completion_tokens for OpenAI's reasoning families (o1, o3, o4,
// gpt-5 and later), which reject max_tokens, and in max_tokens for every
// other model (see [WithMaxTokensParam]). Reasoning.Effort becomes
// reasoning_effort (Reasoning.BudgetTokens has no equivalent here).
// Streams ask for stream_options.include_usage. Request.Extra is merged
// into the body last: its keys replace the adapter's, and a nil value
// removes a field (for servers that reject stream_options, say).
//
// # Responses and streams
//
// Text deltas become text blocks; "reasoning_content" (DeepSeek, xAI) and
// "reasoning" (Groq, OpenRouter, vLLM) become thinking blocks without a
// signature; tool calls are assembled by their index, whatever the index
// starts at and whether a call arrives in one fragment or many (a fragment
// with a new id at an index already used starts a new call). Blocks are
// emitted one at a time, in the order their content first arrives; a tool
// call opens once its name is known. A tool call cut off by the length
// limit gets no BlockStop (its arguments are not JSON) and is left out of
// the completed Response, as llm.Assembler does.
//
// A refusal ("refusal" instead of "content") becomes a text block holding
// the refusal, and the finish reason becomes llm.FinishRefusal, so a caller
// can both show the model's words and branch on the fact. Finish reasons
// map as stop → FinishStop, length → FinishLength, tool_calls and
// function_call → FinishToolUse, content_filter → FinishContentFilter,
// others → FinishUnknown; "stop" on a message with tool calls (some servers)
// is FinishToolUse. Only the first choice (index 0) is read.
//
// Usage is read wherever the server puts it: the final chunk with empty
// choices, the finish chunk (DeepSeek), Groq's x_groq.usage. Cached input is
// prompt_tokens_details.cached_tokens or DeepSeek's prompt_cache_hit_tokens.
//
// # Errors
//
// Every error is an *llm.Error. HTTP errors carry the status, the server's
// message and code, Retry-After and the request id ("insufficient_quota" is
// KindAuth, never retried); "context_length_exceeded"
// (or a message about the maximum context length) is KindContextLength. An
// error inside a 200 stream ({"error": ...} in a chunk, or "event: error")
// ends the stream with a typed error too. A stream that stops before
// "data: [DONE]" and before any finish reason is llm.ErrNetwork wrapping
// llm.ErrIncompleteStream (one that stops after its finish reason but
// before [DONE] completes normally); a stall longer than the idle timeout,
// waiting for a stream's headers or for its next byte, is
// llm.ErrIdleTimeout. The API key is sent only in the Authorization header
// and never appears in an error.
//
// # Performance
//
// The stream is read by the iterator itself: no goroutine, no channel.
// Chunks are parsed by a single-pass reader that allocates nothing for the
// common delta shapes (encoding/json handles the rest), and text is
// gathered in builders, so the cost per chunk stays flat however long the
// answer grows.
//
// The request body (the whole conversation, sent again on every call) is
// written by a hand-written encoder straight from the llm.Request into one
// buffer, reused from call to call, with the exact bytes encoding/json
// would write; encoding/json remains the reference, and the fallback for
// the requests it refuses (see request_encode.go).
//
// This package imports only the standard library, llm, catalog (for Info)
// and agcore's internal packages.
package openai
