// Package responses is the llm.Model adapter for OpenAI's Responses API
// (POST {base}/responses), the API OpenAI recommends for its reasoning
// models, and for other servers that speak it.
//
//	m := responses.New()                                // OPENAI_API_KEY, OPENAI_BASE_URL; gpt-5-mini (DefaultModel)
//	m := responses.New(responses.WithModel("gpt-5"))
//	m := responses.New(responses.WithModel("o4-mini"), responses.WithReasoningSummary("auto"))
//
// It is its own package, next to provider/openai (Chat Completions and the
// servers that speak it), because the two APIs share only the transport:
// requests, responses, stream events and the rules for reasoning all
// differ.
//
// # Requests
//
// Messages become input items, in order. System messages are input
// messages with role "system" (text only), kept where they are in the
// conversation; a caller who wants the top-level "instructions" field sets
// it with Request.Extra. A user message becomes a message of input_text,
// input_image (inline bytes as a data: URL; Detail, "auto" when empty) and
// input_file parts (an uploaded file id, a URL the API fetches, or inline
// data with its name; an inline text document is sent as input_text);
// audio is a KindInvalidRequest error. Tool results, whether messages with
// llm.RoleTool or llm.ToolResult blocks nested in a user message, become
// function_call_output items with their call_id: a string, or content parts
// when the result holds images or files. The API has no error flag for
// them, so an error result's text is prefixed with "Error: " (unless it
// already starts with "error").
//
// An assistant message becomes items in block order: its text (consecutive
// text blocks joined) as an assistant message, each tool call as a
// function_call item (call_id, name, arguments as the model sent them), and
// each thinking block this API made (llm.Thinking with Provider
// "openai-responses" and an ID) as a reasoning item with its id, summary
// and encrypted_content, unchanged. Thinking from any other provider, and
// redacted thinking, is left out. A reasoning item without encrypted
// content is sent (by id) only when store is on: with store off the server
// could not find it and would refuse the request. A reasoning item must be
// followed by the item it led to, so one that ends an assistant message
// (its answer was empty) is left out too.
//
// Extension blocks whose Kind is "openai.<type>" (see [ExtensionKind]) hold
// items of this API and are sent back as the input items they are, from
// assistant or user messages, when the API takes that type as input:
// file_search_call, web_search_call, computer_call and
// computer_call_output, image_generation_call, code_interpreter_call,
// local_shell_call and its output, mcp_list_tools, mcp_approval_request,
// mcp_approval_response, mcp_call, custom_tool_call and its output, and
// item_reference. Other extension blocks are left out.
//
// Tools are function tools with "strict": false (llm.ToolDefinition has no
// strict flag, and the API's default, strict, rejects the optional
// properties most tool schemas have). ToolChoice is "none", "required" or a
// named function (auto is the default and is not sent). MaxTokens is
// max_output_tokens; ResponseFormat is text.format; Reasoning.Effort is
// reasoning.effort (Reasoning.BudgetTokens has no equivalent), and
// [WithReasoningSummary] asks for reasoning.summary. The API has no stop
// sequences: a request with StopSequences is a KindInvalidRequest error.
//
// "store" is false unless [WithStore] says otherwise: OpenAI keeps nothing,
// and every request carries the whole conversation, as agcore's agent
// sends it. So that reasoning survives a stateless tool loop, requests to
// OpenAI's reasoning families (o1, o3, o4-mini, gpt-5 and later, codex), or
// with Request.Reasoning.Effort set, ask for include:
// ["reasoning.encrypted_content"] ([WithEncryptedReasoning] decides
// otherwise); the reasoning items of one step then go back, encrypted, in
// the next. With store on, a caller may chain requests by
// Request.Extra["previous_response_id"]. Request.Extra is merged into the
// body last: its keys replace the adapter's, and a nil value removes a
// field.
//
// # Responses and streams
//
// Output items become blocks in output order, whether they arrive as a
// whole response (Generate) or as stream events (Stream); both go through
// the same reader, so they build alike:
//
//   - A message's output_text parts become text blocks, with their
//     annotations as citations (llm.Text.Citations, and EventCitation
//     before the block's BlockStop): url_citation as llm.CitationURL (URL,
//     title, span), file_citation, container_file_citation and file_path as
//     llm.CitationFile (file id, file name). The API gives spans as
//     indexes of characters of the text, which the adapter counts as
//     Unicode code points, and citations give them in bytes, so they are
//     converted (and clamped to the text). A recording whose text has
//     non-ASCII characters before its citations confirms the indexes are
//     not bytes; none has text outside the Basic Multilingual Plane (an
//     emoji), the only place code points and UTF-16 units differ. A
//     file_citation names one position, which becomes an empty span
//     (Start == End) there. A refusal part is a text block holding the
//     refusal, and the finish reason becomes llm.FinishRefusal. Empty
//     parts make no block.
//   - A function_call becomes a tool-use block whose ID is the call_id.
//   - A reasoning item becomes a thinking block: Provider
//     "openai-responses", ID the item id, Text its summary parts joined by
//     blank lines (or, without a summary, its reasoning_text parts), and
//     Signature its encrypted_content, taken from the finished item
//     (output_item.done), as OpenAI asks: the one an item starts with may
//     be incomplete.
//   - Every other item (web_search_call, file_search_call,
//     code_interpreter_call, image_generation_call, mcp_call,
//     mcp_list_tools, computer_call, ...) becomes an llm.Extension block
//     whose Kind is "openai.<type>" and whose Data is the finished item,
//     emitted when the item is done; the progress events of built-in tools
//     are not reported.
//
// Deltas (output_text, refusal, function_call_arguments,
// reasoning_summary_text, reasoning_text) stream as they come; a .done
// event or a finished item that holds more than its deltas gave supplies
// the rest, and items the events never announced are taken from the final
// response. The stream ends with response.completed or
// response.incomplete: usage (input_tokens with
// input_tokens_details.cached_tokens, output_tokens with
// output_tokens_details.reasoning_tokens), then exactly one EventComplete.
// An incomplete response's reason maps max_output_tokens to FinishLength
// and content_filter to FinishContentFilter (others to FinishUnknown); a
// completed one finishes with FinishToolUse when it holds tool calls, else
// FinishStop. A tool call cut off by the length limit is left out of the
// Response, as llm.Assembler does.
//
// # Errors
//
// Every error is an *llm.Error whose Provider is "openai". HTTP errors carry
// the status, OpenAI's message and code, Retry-After and the request id;
// "insufficient_quota" (sent with 429) is KindAuth, never retried;
// "context_length_exceeded" (or a message about the context window) is
// KindContextLength. An error event or response.failed inside a 200 stream,
// and a failed response, end the call with a typed error too: by its code a
// rate limit, overload, invalid request, auth or context-length error, else
// a (retryable) server error. A stream that stops before its final event is
// llm.ErrNetwork wrapping llm.ErrIncompleteStream; a stall longer than the
// idle timeout, waiting for the headers or the next byte, is
// llm.ErrIdleTimeout. The API key is sent only in the Authorization header
// and never appears in an error.
//
// # Performance
//
// The stream is read by the iterator itself: no goroutine, no channel.
// Events are parsed by a single-pass reader that allocates nothing
// (encoding/json handles the odd shapes and the rare events that carry
// whole items), and text is gathered in builders, so a delta costs one
// allocation (its text) and the cost per event stays flat however long the
// answer grows.
//
// This package imports only the standard library, llm, catalog (for Info)
// and agcore's internal packages.
package responses
