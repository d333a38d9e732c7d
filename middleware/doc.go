// Package middleware decorates an [llm.Model]: a [Middleware] is a plain
// func(llm.Model) llm.Model, like net/http handler middleware, and [Chain]
// composes several in a visible order.
//
// The decorators here are the tool loop ([FunctionInvocation]), retries
// with backoff ([Retry]), hooks ([Hooks]) and structured logging
// ([Logging], [ToolLogging]). The agent and the provider adapters never know
// which of them are present: each is just an llm.Model.
//
// agent.New assembles them in the one correct order; composing by hand,
// the order, outermost first, is
//
//	model := middleware.Chain(adapter,
//		middleware.FunctionInvocation(middleware.ToolLoop{Tools: tools}), // the turn: model calls and tool calls
//		compact.Guard(policy),                                            // each model call inside the input budget
//		hooks.Middleware(),                                               // once per model call, after retries
//		middleware.Retry(middleware.RetryConfig{}),                       // re-sends one model call
//		middleware.Logging(middleware.LogConfig{}),                       // one record per attempt
//		middleware.WithInfo(info),                                        // a model-info override every layer sees
//	)
//
// so that every model call of a tool loop goes through the budget policy,
// hooks, retries and logging, hooks see one call however often it was
// retried, and the log shows every attempt. Retry wrapped around the tool
// loop would run the tools again on every attempt: it panics when it is
// given a tool loop to wrap. Tool calls are wrapped by tool middleware
// given to the loop's invoker (hooks.ToolMiddleware(), ToolLogging(...)):
// a Hooks value has both halves, and both must be installed.
//
// Guardrails are hooks too ([Hooks].InputGuardrails, OutputGuardrails):
// once per turn, on its input and on its final answer, they stop the turn
// with a *[GuardrailError]. They need to know where a turn starts and
// ends, so the agent and conversation.Cycle run them: [Hooks.InputGate], made per turn and put
// right under the tool loop, runs the input guardrails beside (or before,
// [GuardrailsBlocking]) the turn's first model call and holds its output
// back until they pass; [Hooks.RunOutputGuardrails] checks the final
// response. Unlike the other hooks they fail closed.
//
// The tool loop runs the user's own [tool.Tool] values (ToolLoop.Tools);
// an llm.ToolDefinition is only what the model is told. A definition in
// the request without a tool of that name is declared only: the turn ends
// with its call, for the caller to answer.
//
// Time is read and slept through a [clock.Clock], so tests and durable
// orchestrators can replace it.
//
// This package imports llm, tool and clock (and the standard library); it must
// never import agent, session, compact or any provider package.
package middleware
