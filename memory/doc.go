// Package memory keeps conversations in a key/value [Store] and gives them
// back to an agent as context: a [Conversation] is one session's messages,
// and a [Provider] is the agent context
// provider that injects a conversation's recent messages into each run and
// records the run's messages after it succeeds.
//
// Messages are stored one per key, as their storage JSON (see package llm),
// under keys "conv:{session}:{seq}" with a zero-padded sequence number, so
// a prefix listing returns a conversation in order. Any key/value database
// with ordered prefix listing can be a Store; [MapStore] keeps everything
// in memory.
//
// A Provider holds the conversation instead of a session store: use it with
// an agent that has no Store (runs name their session with
// RunOptions.SessionID), or the history would be sent twice.
//
// This package imports llm, agent and compact; it must never import a
// session store, a provider adapter or cmd.
package memory
