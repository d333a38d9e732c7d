// Package budget keeps spending limits that are never crossed: limits on
// the input tokens, output tokens, total tokens and cost of a run, of a
// session and of a principal (a server's caller), checked before each
// model call.
//
// The check is made with the request as it will be sent (after the budget
// policy compressed it: counted by the policy's counter, see
// compact.Policy.Count) plus the call's output cap (Request.MaxTokens, or
// the model's MaxOutputTokens), priced with the model's llm.Price at its
// dearest input rate (uncached or cache write, the long-context tier when
// the input is over its threshold). A call whose worst case could cross a
// limit is not sent: the [Meter]'s middleware fails it with an
// [*ExceededError], which matches llm.ErrBudgetExceeded, and the tool loop
// ends the turn like at its step limit (llm.FinishBudget; see
// middleware.StopOnBudget). After the call, what the provider reports is
// what is counted.
//
// Limits shared beyond one process, such as a server's per-principal
// quotas, are a [Quota]: the worst case is reserved before the call and
// the actual usage settled after it, so concurrent calls never overrun it
// together. [StoreQuota] keeps one in a session store's records
// (session.Records), shared by every replica of a server and kept across
// restarts.
//
// The agent (agent.Config.Budget, agent.RunOptions.Budget) builds a Meter
// for every run; a run's spend is the sum of its model calls, so runs
// nested inside a run's tool calls add up when they are given the parent's
// meter (see [Meter.Child]).
//
// Known limits of the guarantee: input tokens are those the policy's
// counter counts (an estimate unless an exact counter is configured),
// raised, once a call of the run has answered, by the most the provider
// reported above the count per token (the meter calibrates itself on the
// run's calls); the first call of a run has only the count; a call with
// no output cap known (no MaxTokens, no MaxOutputTokens, no
// context window) is checked on its input only; a cost limit on a model
// without a price refuses every call (its cost cannot be bounded).
//
// This package imports llm, compact, session, usage and clock; it must
// never import agent, middleware or a provider.
package budget
