// Package registry is agcore's one table of model providers: for every
// name `--provider` accepts (openai, anthropic, gemini, deepseek, ollama,
// ..., compatible, demo), the API it speaks, the environment variables its
// key and base URL are read from, its default base URL and model, whether
// its own endpoint needs a key and whether a set key picks it, and how its
// model is built. The table is open, as database/sql's drivers are: each
// adapter package [Register]s its providers from its init, so a program
// offers a provider by importing its package (provider/builtin imports
// every adapter agcore ships; an adapter written elsewhere joins the same
// way, and passes provider/providertest). [New] builds the llm.Model for a
// name: it is the one place adapters are constructed by name, used by the
// agcore command (run, chat, serve and its configured agents) and by the
// Temporal worker (agcore-temporal), so the two cannot disagree about a
// provider.
//
//	import _ "github.com/agcore/agcore/provider/builtin"
//
//	m, err := registry.New("deepseek", registry.Config{})                  // DEEPSEEK_API_KEY, deepseek-chat
//	m, err := registry.New("ollama", registry.Config{Model: "qwen3"})       // http://localhost:11434/v1, no key
//	m, err := registry.New("compatible", registry.Config{BaseURL: "http://127.0.0.1:8000/v1", Model: "local"})
//
// An adapter written outside agcore needs only llm, this package and
// provider/providertest (cmd/agcore/testdata/outside is one). The kit
// agcore's own adapters share, provider/internal/adapter, stays internal:
// its signatures are made of internal/httpx's client and internal/sse's
// decoder, so publishing it would freeze those two as well.
//
// Errors come before anything is sent: an unknown name, a provider that
// needs a model or a base URL and was given none, and a missing key for a
// provider's own endpoint (an llm.ErrAuth error naming the variable, as
// the adapters themselves report it). The agcore command's `--provider`
// help, its setup help and the README's provider table are produced from,
// or checked against, [All].
//
// This package imports llm and agcore's internal packages; it must never
// import an adapter (they import it), the agent, a store or the command.
package registry
