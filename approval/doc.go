// Package approval parks tool calls that need a person's approval until
// someone decides them over another channel: a web page, an A2A client, an
// HTTP API. A [Broker] is a tool.Approver (package tool holds approval's
// decision model: tool.Decision, tool.DeniedError, tool.ErrNotPending);
// give it to agent.Config and the calls of tools that need approval (tool.Approvable) wait in the broker,
// visible through [Broker.Pending], until [Broker.Decide] answers them, the
// run's context ends, or the broker's Timeout denies them.
//
// A host that runs turns on behalf of clients labels each run's context with
// [WithOwner] (which agent, session and run the call belongs to, and who may
// decide it) and, to learn that a turn is now waiting, with [WithNotify].
//
// Several processes sharing one store (replicas of a server) share their
// waiting calls through [Broker.Shared]: any of them lists and decides any
// call, once, and the process where the call waits picks the decision up.
//
// Package approval imports only tool; it never imports middleware, agent,
// HTTP or a store.
package approval
