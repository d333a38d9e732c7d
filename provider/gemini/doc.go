// Package gemini is agcore's adapter for Google's Gemini API
// (POST {base}/v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse): it implements [llm.Model] for Gemini
// models, in blocking and streaming form. [WithVertex] sends the same
// requests to Vertex AI's endpoint.
//
// # Setup
//
// [New] reads the key from GEMINI_API_KEY, else GOOGLE_API_KEY (Google's
// SDKs read both too, but prefer GOOGLE_API_KEY when both are set; agcore
// prefers the Gemini-specific name, as its CLI does), and the base URL
// from GOOGLE_GEMINI_BASE_URL, else
// GEMINI_BASE_URL (default https://generativelanguage.googleapis.com),
// unless [WithAPIKey] or [WithBaseURL] say otherwise. The key goes in the
// x-goog-api-key header, never in the URL. A malformed base URL makes
// every call fail with [llm.ErrInvalidRequest] naming it.
//
//	m := gemini.New(gemini.WithModel("gemini-2.5-pro"), gemini.WithBuiltinTool("googleSearch"))
//
// # Request mapping
//
//   - System messages, wherever they are, become systemInstruction's text
//     parts. User messages are "user" contents, assistant messages "model"
//     contents; consecutive contents of one role are merged.
//   - Tool results become functionResponse parts in a user content, named
//     after the call they answer (found by its tool-use id in the
//     history): {"output": text}, or {"error": text} for an error result,
//     with inline images and files as the response's parts. The call's id
//     goes with it when Gemini gave the call one.
//   - Tool calls become functionCall parts (arguments that are not a JSON
//     object go as {}); Gemini's own ids are sent back, generated ones
//     (see below) are not.
//   - Images, audio and files go as inlineData (Data, or a base64 data:
//     URL; a missing media type is detected), or as fileData (a URL, or a
//     FileID, the URI of a file uploaded with the Files API).
//   - Thought signatures go back unchanged on the part kind they came
//     with: a thinking block's on its thought part, a tool call's on its
//     functionCall part, a signature-only thinking block's on the next text
//     part (alone on an empty text part when none follows). Only blocks
//     whose Provider is "gemini" are sent: thinking and signatures of other
//     providers are left out. When none of an assistant message's function
//     calls carries a Gemini signature (they came from another provider,
//     or from Gemini 2.5 without thinking), the first one carries the
//     placeholder Google documents for such histories
//     ("skip_thought_signature_validator"): Gemini 3 requires a signature
//     there, other models ignore it. Redacted thinking is left out.
//   - [llm.Extension] blocks of Gemini's own parts (Kind "gemini.*",
//     such as "gemini.executable_code" and "gemini.code_execution_result")
//     go back verbatim, signatures included; the grounding metadata block
//     and other extensions are left out.
//   - Tools become one functionDeclarations entry (the JSON Schema as
//     parametersJsonSchema, unchanged), followed by the built-in tools of
//     [WithBuiltinTool]. Tool choice none/required/tool sends
//     functionCallingConfig mode NONE/ANY/ANY with allowedFunctionNames.
//   - generationConfig: MaxTokens (else [WithMaxTokens]; else none, the
//     model's maximum) as maxOutputTokens, temperature, topP,
//     stopSequences; ResponseFormat json_object as responseMimeType
//     application/json, json_schema also as responseJsonSchema. A non-nil
//     Reasoning asks for thought summaries (thinkingConfig.includeThoughts)
//     with BudgetTokens as thinkingBudget, else Effort as thinkingLevel
//     ("minimal", "low", "medium", "high"; Gemini 3).
//   - Request.Extra is merged into the body last (safetySettings,
//     cachedContent, ...); a nil value removes a key.
//
// # Responses and streams
//
// The first candidate is the answer. Text parts become text blocks
// (consecutive ones merged), thought parts ("thought": true) thinking
// blocks with Provider "gemini", function calls tool-use blocks whose
// Signature is the part's thoughtSignature and whose Provider is "gemini",
// parallel calls one block each. A signature on a text part becomes a
// thinking block with only that signature, just before the text. Any other
// part (executableCode, codeExecutionResult, inlineData, ...) becomes an
// [llm.Extension] holding the whole part, Kind "gemini." and its field in
// snake case. A function call without an id gets a unique one,
// "gcall_<responseId>_<n>", the same in the events, the Response and the
// history.
//
// Grounding (Google Search, Maps, file search, Vertex AI Search) becomes
// citations of the answer's text blocks: one [llm.Citation] per source a
// groundingSupport names (kind url, or document for retrieved context
// without a URI), spanning its segment. Gemini counts segments in bytes
// of the whole answer's text, so a segment is cited in each text block it
// overlaps, at that block's own offsets, however signatures, calls or
// code split the answer. A source no support names is cited without a
// span on the last text block. Grounding arrives with the last chunk: the
// open text block gets its citations before its BlockStop (an empty
// signed part there is held back until then), earlier blocks after
// theirs. The whole groundingMetadata is also kept as a
// "gemini.grounding_metadata" extension block at the end.
//
// Finish reasons: STOP is [llm.FinishStop], or [llm.FinishToolUse] when
// the answer holds calls; MAX_TOKENS is [llm.FinishLength]; every reason
// saying a policy withheld the answer is [llm.FinishContentFilter]:
// SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, Vertex AI's
// MODEL_ARMOR and the IMAGE_SAFETY, IMAGE_PROHIBITED_CONTENT and
// IMAGE_RECITATION filters; anything else (MALFORMED_FUNCTION_CALL,
// UNEXPECTED_TOOL_CALL, LANGUAGE, OTHER, NO_IMAGE, ...) is
// [llm.FinishUnknown]. A prompt Gemini blocks (promptFeedback.blockReason
// and no candidate) is an [llm.ErrInvalidRequest] error whose Code is the
// block reason: nothing was generated, and the same prompt would be
// blocked again.
//
// Usage: InputTokens is promptTokenCount (which includes the cached
// tokens) plus toolUsePromptTokenCount; CachedInputTokens is
// cachedContentTokenCount; OutputTokens is candidatesTokenCount plus
// thoughtsTokenCount (candidates do not include thoughts), of which
// ReasoningTokens are the thoughts. In a stream each chunk's usage is
// cumulative, and the last one reported is the answer's.
//
// Errors are *[llm.Error] values: Google's status (RESOURCE_EXHAUSTED is
// [llm.KindRateLimited], with the RetryInfo delay unless a Retry-After
// header says otherwise; UNAUTHENTICATED, PERMISSION_DENIED and invalid
// API keys are [llm.KindAuth]; UNAVAILABLE is [llm.KindOverloaded];
// INTERNAL and DEADLINE_EXCEEDED [llm.KindServer]; an input token count
// over the maximum [llm.KindContextLength]), its message, and the
// ErrorInfo reason or the status as Code. An error inside a stream that
// began with HTTP 200 is typed the same way. A stream whose body ends
// before a chunk with a finishReason is [llm.ErrNetwork] wrapping
// [llm.ErrIncompleteStream]. The API key never appears in an error.
//
// A stream runs on the caller's goroutine: breaking out of the range
// cancels the HTTP request and closes the body. Plain text chunks are
// decoded by a small hand-written parser (encoding/json decodes everything
// else and anything the parser does not recognise).
//
// This package imports only llm, catalog, internal/* and the standard
// library.
package gemini
