// Package faultserver is a local HTTP server that speaks the OpenAI Chat
// Completions, Anthropic Messages and Gemini generateContent wire formats
// and misbehaves on demand,
// for reliability tests of the provider adapters and everything above them.
//
// Each request takes the next [Step] of a script: a correct answer (blocking
// JSON or a server-sent event stream, with text in a chosen number of
// chunks, a pause between chunks and tool calls), or one fault: an HTTP
// error status (429 with Retry-After, 500, 502, 503, Anthropic's 529), an
// in-band error after HTTP 200 (Anthropic's overloaded_error event), a
// connection reset after K bytes, a stream without its final event, a
// malformed JSON chunk, an event over a size limit, a stall with no bytes,
// or a huge non-streamed body. When the script is empty, a handler function
// decides, so a test can answer by what the request holds (tool results or
// not), and otherwise a plain text answer is sent.
//
// The server listens on 127.0.0.1 only; requests to /chat/completions (any
// prefix, such as /v1) get the OpenAI format, requests to /v1/messages the
// Anthropic one, requests to .../models/{model}:generateContent and
// :streamGenerateContent the Gemini one (the model and streaming named by
// the path). It counts and records the requests it served.
//
// This package is internal to agcore's tests; it imports only the standard
// library.
package faultserver
