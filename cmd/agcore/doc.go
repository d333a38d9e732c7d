// Command agcore runs LLM agents from the command line: one-shot turns, an
// interactive chat, stored sessions, the built-in file tools and the tools
// of MCP servers, and an offline demo.
//
//	go build -o agcore ./cmd/agcore
//
//	agcore run [flags] PROMPT        one user turn, the whole tool loop included; streams the answer
//	agcore chat [flags]              interactive loop over the same machinery (Ctrl-C cancels a turn, Ctrl-D exits)
//	agcore demo                      the whole machinery offline, on a built-in scripted model
//	agcore sessions list [--json]
//	agcore sessions show ID [--json]
//	agcore sessions rm ID
//	agcore config [--json]           the effective configuration, secrets masked
//
// # Providers
//
// --provider (AGCORE_PROVIDER) is openai, deepseek, anthropic, ollama
// (http://localhost:11434/v1, no key) or compatible (any OpenAI-compatible
// server at --base-url), or a provider named in the config file; demo is
// the offline scripted model of `agcore demo`, for trying run and chat
// without a key. Keys come
// from OPENAI_API_KEY, DEEPSEEK_API_KEY and ANTHROPIC_API_KEY only; they are
// never printed, logged or stored. Base URLs come from --base-url,
// OPENAI_BASE_URL, DEEPSEEK_BASE_URL or ANTHROPIC_BASE_URL, as the official
// SDKs use them: OpenAI-style requests go to {base}/chat/completions,
// Anthropic's to {base}/v1/messages. With no provider named, the first of
// OPENAI_API_KEY, ANTHROPIC_API_KEY, DEEPSEEK_API_KEY that is set picks
// one; with none, run and chat say how to configure one and exit 2.
//
// # Flags
//
// Every flag of run and chat, with its environment variable:
//
//	--provider NAME       AGCORE_PROVIDER
//	--model NAME          AGCORE_MODEL
//	--base-url URL        OPENAI_BASE_URL, DEEPSEEK_BASE_URL, ANTHROPIC_BASE_URL
//	--session ID          load this session and persist the turn into it; without it a new id is made and printed
//	--store DSN           AGCORE_STORE: sqlite:PATH, file:DIR, memory:; default sqlite $AGCORE_HOME/agcore.db
//	--tools LIST          AGCORE_TOOLS: read_file, list_dir, grep, write_file (default read_file,list_dir,grep)
//	--root DIR            AGCORE_ROOT: the directory the file tools are confined to (default: the working directory)
//	--mcp 'CMD ARGS'      an MCP server over stdio (repeatable); its tools are offered as mcp__SERVER__TOOL
//	--mcp-url URL         an MCP server over streamable HTTP (repeatable)
//	--yes, -y             approve tools that need approval (write_file) without asking
//	--max-steps N         AGCORE_MAX_STEPS: most model calls in one turn (default 20)
//	--context-window N    AGCORE_CONTEXT_WINDOW: the model's window, when the catalog does not know it
//	--system TEXT         AGCORE_SYSTEM: the agent's instructions
//	--compact MODE        AGCORE_COMPACT: auto (microcompact, then drop the oldest groups), summarize, off
//	--json                newline-delimited JSON events on stdout
//	--hide-thinking       do not show the model's thinking
//	--log FILE            AGCORE_LOG: a structured log of model and tool calls (no contents)
//	--retries N           AGCORE_RETRIES: retries of a failed model call (default 3)
//	--config FILE         AGCORE_CONFIG: the config file (default $AGCORE_HOME/config.json)
//
// AGCORE_HOME defaults to ~/.agcore. Precedence is flag > environment >
// config file > default; `agcore config --help` shows the file's format.
//
// # Output
//
// In text mode the answer streams on stdout and nothing else goes there;
// tool calls and results (one line each), thinking (dimmed), retries, the
// usage line (input / cached / output tokens, cost, duration) and errors go
// to stderr, with a spinner when stderr is a terminal. With --json, stdout
// carries one event a line:
//
//	{"type":"start","session":"ID","model":"NAME"}
//	{"type":"thinking_delta","text":"..."}
//	{"type":"text_delta","text":"..."}
//	{"type":"tool_call","id":"call_1","name":"read_file","input":{...}}
//	{"type":"tool_result","id":"call_1","name":"read_file","is_error":false,"output":"..."}
//	{"type":"done","finish_reason":"stop","text":"...","usage":{"input_tokens":N,"output_tokens":N,"cached_input_tokens":N},"cost_usd":N,"cost_known":true}
//	{"type":"error","code":"rate_limited|auth|context_length|overloaded|server|network|invalid_request|blocked|cancelled|internal","message":"..."}
//
// done.usage and cost_usd are summed over every model call of the turn
// (cost_usd is 0 and cost_known false when the model has no known price). A stop at --max-steps
// is a done with finish_reason "max_steps", every tool call answered in the
// stored turn.
//
// # Exit status
//
// 0 after done; 1 after an error event (the session is left exactly as it
// was before the turn); 2 for bad usage or no usable provider; 130 when a
// Ctrl-C cancelled the turn.
//
// # The pipeline
//
// Each turn runs the provider adapter under the middleware chain, built in
// one place (internal/cli/build.go): adapter → Logging → Retry → Hooks →
// compact.Guard → FunctionInvocation (the tool loop, with the approver and
// --max-steps), inside an agent.Agent that holds the tools (fstool and
// MCP), the compression strategy per --compact with the catalog's context
// window (or --context-window), and the session store. The strategy
// compresses the history before each turn, and the guard applies it again
// to any model call of the tool loop that would go over the input budget. The turn is stored when the
// model has finished and before done is printed.
package main
