// Package anthropic is agcore's adapter for the Anthropic Messages API
// (POST {base}/v1/messages): it implements [llm.Model] for Claude models, in
// blocking and streaming form.
//
// # Setup
//
// [New] reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL (default
// https://api.anthropic.com) unless [WithAPIKey] or [WithBaseURL] say
// otherwise. The base URL must be an absolute http or https URL; a
// malformed one makes every call fail with [llm.ErrInvalidRequest] naming
// it. Requests carry x-api-key, anthropic-version 2023-06-01 and any
// headers given with [WithHeader]; beta flags go there:
//
//	m := anthropic.New(anthropic.WithHeader("anthropic-beta", "files-api-2025-04-14"))
//
// # Request mapping
//
//   - System messages, wherever they are, become the top-level "system"
//     field as text blocks, in order.
//   - Tool-result messages become "tool_result" blocks (ids and is_error
//     kept) in a user message; consecutive results share one user message,
//     and user content that follows them joins that message after the
//     results. Consecutive messages of the same role are merged, as the
//     API's alternation rule requires.
//   - Images go as base64 (Data, or a data: URL) or url sources; files go as
//     "document" blocks with a base64, text (text/* media types), url or
//     file (FileID; needs the files beta header) source, Name as the title.
//     Audio has no Anthropic equivalent and is an error.
//   - Thinking blocks with a signature and redacted thinking are sent back
//     unchanged. Thinking without a signature (DeepSeek's reasoning, say)
//     cannot be verified by Anthropic and is dropped, as are empty text
//     blocks, which the API rejects.
//   - [llm.Extension] blocks whose Data is a JSON object with "type" equal
//     to Kind are sent verbatim: that is how server-tool, compaction and
//     other blocks this adapter returned as extensions go back (a
//     "pause_turn" answer is continued by sending it back). Other
//     extensions are dropped.
//   - Reasoning.BudgetTokens becomes thinking {type: enabled,
//     budget_tokens}; Reasoning.Effort becomes output_config.effort
//     ("minimal" is sent as "low").
//   - ResponseFormat json_schema becomes output_config.format (Anthropic's
//     structured outputs); json_object has no Anthropic equivalent and is an
//     error; text is the default and sends nothing.
//   - Tool choice auto sends nothing, none/required/tool send
//     {type: none}/{type: any}/{type: tool, name}.
//   - Request.Extra is merged into the body last; a nil value removes a key.
//   - MaxTokens 0 means [WithMaxTokens], else [DefaultMaxTokens] lowered
//     to the model's maximum output when the catalog knows a smaller one; a
//     default is raised above the thinking budget when it would not exceed
//     it (the API requires budget_tokens < max_tokens).
//
// # Prompt caching
//
// Unless [WithAutoCache](false) is given, cache_control {type: ephemeral}
// breakpoints mark the stable prefix of every request: the last tool
// definition, the last system block, and the last cacheable block of the
// message before the newest user turn (the end of the previous turn). That
// is at most three of the API's four breakpoints.
//
// # Responses and streams
//
// Text, thinking (with its signature), redacted thinking and tool use map to
// the matching blocks; server-tool results, compaction and any other block
// type become [llm.Extension] blocks holding the block's whole JSON. Stop
// reasons end_turn and stop_sequence map to [llm.FinishStop], max_tokens and
// model_context_window_exceeded to [llm.FinishLength], tool_use to
// [llm.FinishToolUse], refusal to [llm.FinishRefusal]; pause_turn (a server
// tool loop paused; send the answer back to let it continue) and anything
// else map to [llm.FinishUnknown].
//
// Usage: InputTokens is input_tokens + cache_read_input_tokens +
// cache_creation_input_tokens, with the two cache counts also reported
// apart. In a stream, message_delta's counts (cumulative) override
// message_start's. When the usage lists "iterations" (server-side
// compaction ran extra sampling steps), the iterations are summed, so Usage
// is what the call was billed for.
//
// Errors are *[llm.Error] values: HTTP errors keep the status, Anthropic's
// error type as Code, its message and the request-id; 529 and
// overloaded_error are [llm.KindOverloaded], "prompt is too long" is
// [llm.KindContextLength]. An "error" event inside a stream that began with
// HTTP 200 is typed the same way. A stream that ends without message_stop is
// [llm.ErrNetwork] wrapping [llm.ErrIncompleteStream]. The API key never
// appears in an error.
//
// A stream runs on the caller's goroutine: breaking out of the range
// cancels the HTTP request and closes the body. After message_stop an
// HTTP/1 body is read to its end (for at most 50 ms) so the connection can
// be reused. Deltas, block stops, message stops and pings are decoded by a
// small hand-written parser (encoding/json decodes everything else and
// anything the parser does not recognise), so a streamed chunk costs a
// fraction of decoding it with encoding/json alone.
//
// This package imports only llm, catalog, internal/* and the standard
// library.
package anthropic
