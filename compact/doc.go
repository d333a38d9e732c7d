// Package compact keeps a conversation inside a model's context window: it
// counts tokens, compresses long histories, and validates and repairs
// message sequences.
//
// # Counting
//
// A [TokenCounter] counts messages and tool definitions. [CounterFor]
// returns one for a model: an [Estimator], which needs no vocabulary and is
// aware that Chinese, Japanese and Korean text, source code and JSON
// tokenize very differently from English prose (the calibration test in
// compact/tiktoken holds it within ±15% of o200k_base on each), scaled up
// for Claude models, whose tokenizer counts more. Images, audio and files
// get documented fixed estimates ([ImageTokens], [AudioTokens],
// [FileTokens]), and images of known size the providers' formulas.
//
// Exact counting for OpenAI models (o200k_base, cl100k_base, with OpenAI's
// documented per-message and per-tool overheads) is in package
// compact/tiktoken: its vocabularies add about 12 MB to a binary, so this
// package does not link them. Use tiktoken.For(model) where the exact
// figure is worth that.
//
// # Compressing
//
// A [Strategy] returns messages whose count is within a budget, or an error
// ([ErrCannotFit] when it cannot). The budget covers messages only: subtract
// the tools' count ([TokenCounter.CountTools]) from the model's input budget
// first. Strategies never modify their input, and their output always
// validates: every tool call keeps its result, in order, in the message
// right after it; the last assistant message with tool calls keeps its
// thinking blocks (Anthropic requires them back unchanged).
//
//   - [Microcompact] replaces old tool results with a one-line placeholder
//     naming the tool and the original size; never error results.
//   - [Truncate] drops whole groups (an assistant message with its tool
//     results, a user message), oldest first, keeping the system messages,
//     the first user message and the last groups.
//   - [Summarize] has a model summarize the oldest groups into one message,
//     with a circuit breaker and thrash detection.
//   - [Pipeline] tries strategies cheapest first and stops when the
//     conversation fits; [DefaultPipeline] builds the usual one.
//   - [Incremental] wraps a strategy for an agent that compresses its whole
//     history before every request: it extends its previous result with the
//     new messages while that fits, so requests share their prefix.
//
// What an agent should use:
//
//	strategy := compact.NewIncremental(compact.DefaultPipeline(summarizer))
//
// [Apply] runs any strategy and returns a [Report] of what it did.
//
// # The budget policy
//
// [Policy] is the one way a request is kept inside the budget; the agent,
// [Guard] and package conversation all apply it through [Policy.Fit]:
// count the messages and tool definitions, compare with the input budget,
// compress with the strategy (using a partial result when that is all it
// has), never drop the user's newest message, stop calling a strategy that
// failed three times in a row until one succeeds (a circuit breaker), and
// refuse with an *llm.Error of kind context_length, sending nothing, a
// request that is still larger than the whole context window. Its zero
// value works: the default strategy (below) and the estimator counter.
//
// Within a turn the tool loop makes up to twenty model calls, each adding
// an assistant message and its tool results, so a tool-heavy turn outgrows
// the budget after its first step. [Guard] is the model middleware that
// applies the policy to every call (what the loop records, and the agent
// persists, stays whole); agent.New puts it inside the tool loop, so that
// each step is checked, and outside retries, so that a retry resends the
// same compressed request:
//
//	a, err := agent.New(adapter, agent.Config{
//		Compaction: &compact.Policy{Strategy: compact.NewIncremental(compact.DefaultPipeline(summarizer))},
//	})
//
// The summarizer is the adapter with retries, never the agent's pipeline
// itself.
//
// # Prompt caches
//
// Providers cache the longest prefix a request shares with a recent one
// (OpenAI and DeepSeek automatically, Anthropic at marked breakpoints), and
// bill cached tokens at a tenth of the price or less. Every compression
// changes the conversation somewhere, and the cache misses from that point
// on. An agent compresses the full stored history again before every
// request, so a strategy that cut at a new place each time would miss the
// cache on every request. The strategies here therefore choose cut points
// that stay put:
//
//   - the system messages and the first user message are never changed, so
//     they stay a cached prefix whatever happens after them;
//   - [Microcompact] moves its boundary in steps of several messages and
//     acts only when it frees enough to be worth a cache miss;
//   - [Truncate] and [Summarize] quantize their cut to steps of a fifth of
//     the budget (measured on the history, which only grows at its end), so
//     the same groups are dropped, and the same remembered summary is
//     reused, request after request until the history has grown by a step;
//   - [Incremental] goes further: it sends its previous result plus the new
//     messages, untouched, until that no longer fits, and then compresses
//     to three quarters of the budget, leaving room to grow. Under it the
//     strategies of this package drop their quantization where it only
//     costs: [Microcompact] clears every result older than its KeepRecent
//     messages (Step 1 unless set), so each compression re-sends little
//     beyond the newest messages and frees more, which postpones the next
//     compression and the next truncation.
//
// The trade-off is deliberate: each compression removes more than the
// minimum (up to a step, or down to the low-water mark) in exchange for a
// prefix that stays byte-identical between compressions, so most requests
// hit the cache (in the 200-turn test session on a 32k budget, 92% of
// requests extend the previous one with Incremental, 79% to 87% without).
//
// # Compaction across processes
//
// What [Incremental] remembers (the input it last compressed and what it
// sent) is kept, for a request whose context carries a [State]
// ([WithState]), in that State instead of the Incremental's per-process
// memory. The agent gives every run with a session a fresh State and
// starts the run from the view its session stored with the last
// compressed turn (session.Compaction: the messages the last compressed
// request sent, in place of the history before a boundary); the run
// returns the view its own last request sent, stored atomically with the
// turn. So the next turn, in this process or another (a new `agcore run`
// per turn, a replica of agcore serve, a Temporal worker), sends exactly
// what one long-lived process would, and a compression works on that
// view (the previous result plus the new messages), never on the whole
// history afresh. Package conversation keeps the view as its history;
// a bare [Guard] without a State (a stateless server resent the whole
// history each time) uses the Incremental's own memory, with the same
// results.
//
// BenchmarkCacheShare and examples/cacheshare measure the share of input
// tokens a prompt cache could serve on a 24k-token window: with the
// default, about 0.91 over 30 turns and 0.90 over 200, against 0.67 and
// 0.60 for dropping the oldest turns to fit, while keeping more of the
// conversation. The same session run as 30 separate `agcore run`
// processes over one SQLite store scores the same (cmd/agcore's
// TestCompactionAcrossProcesses: 0.90), where every process compressing
// the whole history afresh scored 0.77. A strategy
// that removed the exact minimum would keep a little more context but pay
// full price for the whole conversation on every request. [Report.KeptPrefix]
// and [Report.BreaksPrefix] tell how much of the input a compression kept;
// the agent's request-hash statistic shows the effect across requests.
//
// # Validation
//
// [Check] and [Validate] apply the rules providers enforce on message order;
// [Repair] fixes tool pairing in a history
// loaded after a crash, adding an error result for each call that has none.
//
// # Tracing
//
// When the context of [Policy.Fit] carries an observe.Observer (a traced
// agent run), each compression runs in a compaction span recording the
// strategy, the budget and the tokens and messages before and after;
// a request that fits opens no span.
//
// This package imports only packages llm, catalog (for model names) and
// observe (the tracing seam, standard library only) and the standard
// library; it must not import other agcore packages, nor
// github.com/tiktoken-go/tokenizer (a test checks).
package compact
