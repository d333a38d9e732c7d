// Command agcore runs LLM agents from the command line: one-shot turns, an
// interactive chat, stored sessions, the built-in file tools and the tools
// of MCP servers, and an offline demo.
//
//	go build -o agcore ./cmd/agcore
//
//	agcore run [flags] [PROMPT]      one user turn, the whole tool loop included; streams the answer
//	agcore chat [flags]              interactive loop over the same machinery (Ctrl-C cancels a turn, Ctrl-D exits)
//	agcore demo                      the whole machinery offline, on a built-in scripted model
//	agcore replay [flags] FILE       re-run a record of run/chat --record offline; print how the requests drifted
//	agcore eval [flags] FILE...      score the agent on eval sets (agcore's, ADK's, records), offline or live
//	agcore sessions list [--json]    title, model, turns, tokens, cost; newest first
//	agcore sessions show ID [--json] a transcript with its usage and cost totals
//	agcore sessions rm ID
//	agcore models [FILTER]           known models (window, price, provider), aliases, what a server serves
//	agcore config [--json]           the effective configuration, secrets masked
//	agcore serve [flags]             serve agents over HTTP: OpenAI-compatible endpoints, A2A, a web page
//	agcore mcp login|logout|list     MCP servers: OAuth 2.1 logins, their state and tools
//	agcore mcp serve [flags]         serve agents to MCP clients (stdio, or streamable HTTP with --http)
//	agcore run --temporal ADDR ...   a durable turn on Temporal
//	agcore worker [flags]            a Temporal worker for durable runs (runs agcore-temporal)
//	agcore approve [flags] [CALL]    list or decide the tool calls a durable turn waits on
//	agcore completion SHELL          the completion script for bash, zsh, fish or powershell
//	agcore version                   the module version and commit agcore was built from (also --version)
//
// worker, approve and run --temporal execute agcore-temporal (a separate
// module: cd temporal && go install ./cmd/agcore-temporal, from a clone),
// found next to agcore, on PATH or at $AGCORE_TEMPORAL_BIN.
//
// run reads piped stdin too: alone it is the prompt, after arguments it
// follows them after a blank line. Session ids are accepted by any unique
// prefix. chat sends a pasted text of several lines, or lines between two
// lines of """, as one prompt, and answers /commands itself.
//
// # Providers
//
// --provider (AGCORE_PROVIDER) is a name of the provider registry
// (provider/registry, which builds the adapter): openai, openai-responses
// (OpenAI through the Responses API, {base}/responses), anthropic, gemini,
// deepseek, ollama (http://localhost:11434/v1, no key), vllm, openrouter,
// groq, xai, qwen, moonshot (provider/openai's presets, each with its own
// key variable), compatible (any OpenAI-compatible server at --base-url),
// demo (the offline scripted model of `agcore demo`), or a provider named
// in the config file; `agcore run --help` lists each with its variables
// and defaults. Keys come from the environment only; they are never
// printed, logged or stored. Base URLs come from --base-url or the
// provider's variable (OPENAI_BASE_URL, ANTHROPIC_BASE_URL,
// GOOGLE_GEMINI_BASE_URL, DEEPSEEK_BASE_URL), as the official SDKs use
// them: OpenAI-style requests go to {base}/chat/completions, Anthropic's to
// {base}/v1/messages, Gemini's to {base}/v1beta/models/.... With no
// provider named, the maker of the -m model (claude-* is Anthropic's) or
// the first of OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY,
// DEEPSEEK_API_KEY, ... that is set picks one; with none, run and chat say
// how to configure each and exit 2.
//
// # Flags
//
// Every flag of run and chat, with its environment variable:
//
//	--provider NAME       AGCORE_PROVIDER
//	-m, --model NAME      AGCORE_MODEL: a model id or an alias (sonnet, 4o, ...; agcore models lists them)
//	--base-url URL        OPENAI_BASE_URL, ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL, DEEPSEEK_BASE_URL
//	--session ID          continue this session (or the one whose id it begins); a new name starts one
//	-c, --continue        continue the most recently updated session
//	--store URL           AGCORE_STORE: sqlite:PATH, file:DIR, postgres://…, redis://… (shared by several processes), memory:; default sqlite $AGCORE_HOME/agcore.db
//	--config FILE         AGCORE_CONFIG: the config file (default $AGCORE_HOME/config.json)
//	--agent NAME          the config file's agent NAME ("agents"): its provider, model, base_url, system, tools and max_steps replace the command's
//	--tools LIST          AGCORE_TOOLS: read_file, list_dir, grep, write_file (default read_file,list_dir,grep)
//	--root DIR            AGCORE_ROOT: the directory the file tools are confined to (default: the working directory)
//	--allow-secret PAT    AGCORE_ALLOW_SECRETS: let the file tools use paths of a secret pattern (.env*, .ssh/, *.pem, ...; refused by default) (repeatable)
//	--mcp 'CMD ARGS'      an MCP server over stdio (repeatable); its tools are offered as mcp__SERVER__TOOL
//	--mcp-url URL         an MCP server over streamable HTTP (repeatable)
//	-y, --yes             approve tools that need approval (write_file) without asking
//	--max-steps N         AGCORE_MAX_STEPS: most model calls in one turn (default 20)
//	--context-window N    AGCORE_CONTEXT_WINDOW: the model's window, when the catalog does not know it
//	--system TEXT         AGCORE_SYSTEM: the agent's instructions
//	--compact MODE        AGCORE_COMPACT: auto (microcompact, then drop the oldest groups), summarize, off
//	--retries N           AGCORE_RETRIES: retries of a failed model call (default 3)
//	--timeout D           AGCORE_TIMEOUT: the longest one turn may take (default 10m; 0 for none)
//	--idle-timeout D      AGCORE_IDLE_TIMEOUT: silence of a model call, across its retries, before "no response" (default 2m)
//	--json                newline-delimited JSON events on stdout
//	--raw                 AGCORE_RAW: no Markdown rendering on a terminal
//	--hide-thinking       do not show the model's thinking
//	--log FILE            AGCORE_LOG: a structured log of model and tool calls (no contents)
//	--otel URL            OTEL_EXPORTER_OTLP_ENDPOINT (and the other OTEL_* variables): export traces and metrics over OTLP
//
// AGCORE_HOME defaults to ~/.agcore. Precedence is flag > environment >
// config file > default; `agcore config --help` shows the file's format.
// Mistakes (a base URL that is not a URL, a --store of no kind, a --root
// that is not a directory, an unknown command or flag) are found before
// anything is sent or stored: one line, exit status 2.
//
// The file tools refuse keys and credentials (.ssh/, .aws/,
// .config/gcloud/, .gnupg/, .env*, *.pem, *.key, id_*, .netrc, .pgpass,
// .git-credentials) with an error result the model reads, unless
// --allow-secret allows the pattern; grep skips them and list_dir leaves
// them out, each saying how many (tool/fstool).
//
// # Output
//
// In text mode the answer streams on stdout and nothing else goes there
// (rendered as Markdown, code highlighted, when stdout is a terminal: a
// line at a time, each as soon as it is complete, a table once whole);
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
//	{"type":"error","code":"rate_limited|auth|context_length|overloaded|server|network|invalid_request|blocked|cancelled|timeout|internal","message":"..."}
//
// done.usage and cost_usd are summed over every model call of the turn
// (cost_usd is 0 and cost_known false when the model has no known price). A stop at --max-steps
// is a done with finish_reason "max_steps", every tool call answered in the
// stored turn.
//
// # Exit status
//
// 0 after done; 1 after an error event (the session is left exactly as it
// was before the turn); 2 for a usage or configuration mistake or no usable
// provider, found before any model call; 130 when a Ctrl-C cancelled the
// turn (not an error: one quiet line, "cancelled; nothing was stored"). A
// session id is printed only when the session holds the turn.
//
// # The pipeline
//
// Each turn runs the provider adapter (behind the idle budget of
// internal/cli/quiet.go) under the middleware chain, built in one place
// (internal/cli/build.go, with agent.New): adapter → Logging → Retry → Hooks →
// compact.Guard → FunctionInvocation (the tool loop, with the approver and
// --max-steps), inside an agent.Agent that holds the tools (fstool and
// MCP), the compression strategy per --compact with the catalog's context
// window (or --context-window), and the session store. The strategy
// compresses the history before each turn, and the guard applies it again
// to any model call of the tool loop that would go over the input budget. The turn is stored when the
// model has finished and before done is printed.
package main
