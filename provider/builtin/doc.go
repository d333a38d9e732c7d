// Package builtin registers every provider adapter agcore ships with the
// provider registry, by importing them: OpenAI's Chat Completions (and
// every OpenAI-compatible preset), the Responses API, Anthropic, Gemini
// and the offline demo. A program that picks providers by name
// (registry.New, the agcore command, a server, a worker) imports it for
// its side effect:
//
//	import _ "github.com/agcore/agcore/provider/builtin"
//
// An adapter written elsewhere joins the same way: its package calls
// registry.Register from its init, and the program imports it.
//
// This package imports only the adapters; it must never import the agent,
// a store or the command.
package builtin

import (
	_ "github.com/agcore/agcore/provider/anthropic"
	_ "github.com/agcore/agcore/provider/demo"
	_ "github.com/agcore/agcore/provider/gemini"
	_ "github.com/agcore/agcore/provider/openai"
	_ "github.com/agcore/agcore/provider/openai/responses"
)
