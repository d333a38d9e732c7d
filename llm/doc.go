// Package llm is agcore's provider-neutral message model and model interface.
//
// Everything in agcore speaks these types: a [Message] is a role plus an
// ordered list of content [Block]s; a [Request] goes to a [Model]; a [Response]
// (or a stream of [Event]s that always ends with exactly one [EventComplete]
// carrying the whole assembled Response) comes back. Provider adapters
// (provider/openai, provider/anthropic, provider/gemini) translate these types to and from their
// wire formats; middleware decorates a Model; the agent never sees a wire
// format.
//
// The storage JSON of a Message is the model's own tagged form, the one
// sessions persist:
//
//	{"type":"user","content":[{"type":"text","text":"hello"}]}
//	{"type":"assistant","content":[{"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Beijing"}}]}
//	{"type":"tool_result","tool_call_id":"call_1","content":[{"type":"text","text":"Sunny"}],"is_error":false}
//
// Encoding then decoding a Message is lossless for every block kind; an
// unknown block type decodes into an [Extension] block instead of failing.
//
// Errors from models are *[Error] values whose Kind can be tested with
// errors.Is against the sentinels ([ErrRateLimited], [ErrAuth], ...).
//
// This package imports only the standard library and internal/jsonscan (the
// JSON scanning primitives of its one-pass message decoder); it must never
// import any other agcore package.
package llm
