// Package sse decodes Server-Sent Events (the text/event-stream format) as
// LLM providers send them, and guards a response body with an idle timeout.
//
// The decoder implements the whole format: event, data, id and retry fields;
// data spread over several lines (joined with "\n"); comment lines (": ping");
// LF, CRLF and lone-CR line endings; a leading UTF-8 BOM. Lines have no fixed
// length limit, but an event larger than Options.MaxEventSize fails with
// ErrEventTooLarge instead of growing memory without bound.
//
// Decoding reuses its buffers: after warm-up, Next allocates nothing per
// event. The Data of an Event is valid only until the next call to Next.
//
// This package imports only the standard library.
package sse
