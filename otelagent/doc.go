// Package otelagent traces and measures agcore agents, bare models and
// tools with OpenTelemetry, in the GenAI semantic conventions (the
// gen_ai.* names of go.opentelemetry.io/otel/semconv/v1.41.0, the latest
// Go semconv package that carries them).
//
// Give an agent a [Telemetry] and every run is traced:
//
//	tel, err := otelagent.New(otelagent.Config{TracerProvider: tp, MeterProvider: mp})
//	a, err := agent.New(model, agent.Config{Name: "assistant", Telemetry: tel})
//
// Without providers, New uses the global ones (otel.GetTracerProvider,
// otel.GetMeterProvider): that is what "the global providers when none is
// given" means for agcore, whose agent package never imports OpenTelemetry
// (an agent without Telemetry links none of it and records nothing).
//
// # Spans
//
// One run is a tree:
//
//	invoke_agent {agent}          kind internal; the whole run, persistence included
//	├── agcore.compaction          when the budget policy compresses a request
//	├── chat {model}               kind client; one model call of the tool loop, its retries included
//	│     events agcore.retry, one per retried attempt
//	├── execute_tool {tool}        kind internal; one per tool call (hooks and approval included)
//	├── chat {model}
//	└── agcore.persistence         the append of the turn to its session
//
// The spans carry, where known:
//
//   - every GenAI span: gen_ai.operation.name (invoke_agent, chat,
//     execute_tool); error.type and an error status when it failed (see
//     [ErrorType]).
//   - invoke_agent: gen_ai.agent.name, gen_ai.agent.id (agent.Config.ID),
//     gen_ai.conversation.id (the session), gen_ai.provider.name,
//     gen_ai.request.model, gen_ai.response.model,
//     gen_ai.response.finish_reasons, gen_ai.usage.* summed over the
//     run's model calls, agcore.run.id, agcore.cost.usd.
//   - chat: gen_ai.provider.name, gen_ai.request.model, gen_ai.request.stream,
//     gen_ai.request.max_tokens, .temperature, .top_p, .stop_sequences,
//     gen_ai.output.type, gen_ai.conversation.id, gen_ai.response.id,
//     gen_ai.response.model, gen_ai.response.finish_reasons,
//     gen_ai.response.time_to_first_chunk (streams),
//     gen_ai.usage.input_tokens, .output_tokens,
//     .cache_read.input_tokens, .cache_creation.input_tokens,
//     .reasoning.output_tokens, agcore.attempts, agcore.cost.usd.
//   - execute_tool: gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.tool.type
//     ("function"), gen_ai.tool.description.
//   - agcore.compaction: agcore.compaction.strategy, .budget,
//     .tokens_before, .tokens_after, .messages_before, .messages_after.
//   - agcore.persistence: gen_ai.conversation.id, agcore.run.id,
//     agcore.persistence.messages.
//
// Each retried attempt of a model call is an agcore.retry event on its
// chat span (agcore.attempt, error.type, agcore.error.message,
// agcore.retry.delay in seconds); a call that succeeded on its third
// attempt has two such events and agcore.attempts = 3, and one that failed
// for good has the last attempt's error as its own status.
//
// Message contents are recorded only with Config.RecordContent:
// gen_ai.system_instructions, gen_ai.input.messages, gen_ai.output.messages
// and gen_ai.tool.definitions on chat spans (and the caller's messages and
// the final answer on invoke_agent), gen_ai.tool.call.arguments and
// gen_ai.tool.call.result on execute_tool spans, as JSON strings in the
// conventions' shapes. API keys never appear: they are in no message, and
// errors are redacted by the adapters before anything sees them.
//
// # Metrics
//
// Per model call: gen_ai.client.operation.duration (s),
// gen_ai.client.token.usage ({token}, gen_ai.token.type input and output),
// gen_ai.client.operation.time_to_first_chunk (s, streams: the first event
// of the stream, retries included) and agcore.client.cost (USD, an agcore
// metric, counted only when the model's price is known), with
// gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model,
// gen_ai.response.model and error.type. Per run: gen_ai.client.operation.duration
// with gen_ai.operation.name invoke_agent. The histograms use the
// conventions' advised buckets.
//
// # Context propagation
//
// The run's context carries its span and an observe.Observer: the tool
// loop, each model call, each tool call and persistence get it, the
// provider adapters put its traceparent on their HTTP requests, and MCP
// tool calls carry it in _meta (and as HTTP headers over HTTP). A tool
// that calls another service can do the same with observe.Inject(ctx,
// req.Header.Set), or use any OpenTelemetry instrumentation with ctx.
//
// # Bare models and tools
//
// [Telemetry.Middleware] traces a bare llm.Model (with
// [Telemetry.OnRetry] given to its retries); [Telemetry.ToolMiddleware]
// traces a tool.Invoker's calls.
//
// This package imports agent, budget, middleware, tool, llm, observe, usage and
// the OpenTelemetry API (otel, trace, metric, semconv); never the SDK,
// which is the program's choice.
package otelagent
