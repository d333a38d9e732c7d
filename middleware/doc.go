// Package middleware decorates an [llm.Model]: a [Middleware] is a plain
// func(llm.Model) llm.Model, like net/http handler middleware, and [Chain]
// composes several in a visible order.
//
// The decorators here are the tool loop ([FunctionInvocation]), retries
// with backoff ([Retry]), hooks ([Hooks]) and structured logging
// ([Logging], [ToolLogging]). The agent and the provider adapters never know
// which of them are present: each is just an llm.Model.
//
// The recommended order, outermost first, is
//
//	model := middleware.Chain(adapter,
//		middleware.FunctionInvocation(middleware.ToolLoop{...}), // the turn: model calls and tool calls
//		compact.Guard(compact.GuardConfig{...}),                 // each model call inside the input budget
//		hooks.Middleware(),                                      // once per model call, after retries
//		middleware.Retry(middleware.RetryConfig{}),              // re-sends one model call
//		middleware.Logging(middleware.LogConfig{}),              // one record per attempt
//	)
//
// so that every model call of a tool loop goes through the guard, hooks,
// retries and logging, hooks see one call however often it was retried, and
// the log shows every attempt. The guard (package compact; any
// func(llm.Model) llm.Model is a Middleware) sits inside the loop because
// the agent compresses only once, before the turn, while each step of the
// loop adds an assistant message and its tool results; it sits outside
// retries so that a retry resends the same compressed request, and hooks
// see the request as sent. Tool calls are wrapped by tool middleware given to
// the loop's invoker (hooks.ToolMiddleware(), ToolLogging(...)).
//
// Time is read and slept through a [Clock], so tests and durable
// orchestrators can replace it.
//
// This package imports llm and tool (and the standard library); it must
// never import agent, session, compact or any provider package.
package middleware
