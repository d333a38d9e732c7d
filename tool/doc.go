// Package tool is what a model can call: the [Tool] interface, typed tools
// made from plain Go functions ([Func]) with a JSON Schema generated from
// their argument type and arguments validated before the function runs, a
// [Registry] that lists tools in registration order, and the [Invoker] that
// runs a batch of tool calls concurrently and returns one tool-result
// message per call, in call order, each tied to its call's id.
//
// Error handling is part of the contract. An error returned by a tool
// becomes an error result the model reads and the turn goes on; an error
// wrapping [ErrFatal] (see [Fatal]) stops the turn. Unknown tools, arguments
// that are not valid JSON or fail the schema, panics and per-tool timeouts
// all become error results; the cancellation of the turn's context stops
// every call and the batch fails with a cancelled error.
//
// Tool [Middleware] wraps each call ([Handler]); hooks, approval and logging
// are built on it by package middleware. The [Runner] seam decides how the
// calls of a batch run in parallel; [GoRunner] is the goroutine default.
//
// This package imports only llm (and the standard library and
// github.com/google/jsonschema-go); it must never import middleware, agent
// or any provider package.
package tool
