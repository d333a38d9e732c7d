// Package session keeps conversations: their messages and what goes with
// them, stored turn by turn.
//
// A [Session] is one conversation as a store holds it: its ID, its
// messages in order, the state bag context providers keep per session
// ([GetState], [SetState]), the usage and cost summed over its turns, and
// the prompt-cache statistic of its requests ([PrefixStats] and the prefix
// hashes of the last request). A Session value is the caller's copy:
// changing it changes nothing stored.
//
// A [Turn] is what one agent run adds: the caller's input messages followed
// by the run's transcript (assistant messages and tool results), the
// run's usage and cost, the state keys it changed and the request-hash
// statistic after it. Turns are the unit of storage: a store appends a
// turn whole or not at all, and a turn's ID makes appending it again a
// no-op, so a retried append never duplicates messages. [Session.Apply]
// adds a turn to an in-memory session the way a store does.
//
// A [Store] keeps sessions: Create, Load, Append, List (newest first, in
// pages) and Delete. The stores are
//
//   - session/memstore: in memory, for tests and short-lived programs;
//   - session/filestore: one append-only JSON Lines log per session in a
//     directory;
//   - session/sqlite: one SQLite database (the pure-Go driver), several
//     processes may share it;
//   - session/postgres: a PostgreSQL database, for many processes on many
//     machines (appends to a session serialized by its row lock);
//   - session/redis: a Redis database, for many processes when speed
//     matters more than durability (appends checked against the version
//     they were built on).
//
// Package session/sessiontest is the contract every store passes (and a
// third party's store can run), with a crash test for the durable ones.
//
// The invariants every store keeps:
//
//   - Append is atomic: after a crash either every message of a turn is
//     stored or none, and a turn that cannot be encoded (a tool input that
//     is not JSON, a message without a role) stores nothing.
//   - Append is idempotent by turn ID within a session.
//   - Messages come back in the order they were appended, in their storage
//     JSON's normal form (package llm), deeply equal to what went in.
//   - Loads are isolated: neither the caller's later changes to an appended
//     turn nor its changes to a loaded session reach what is stored.
//   - Ids are checked with [ValidateID], so an id is always safe as a file
//     name.
//
// # Request hashes
//
// [Session.TouchRequest] records each request the agent sends for a
// session: it computes a hash of every prefix of the request's messages
// ([PrefixHashes]; the definition is [HashVersion]'s), compares them with
// the previous request's ([Divergence]) and counts how often a request
// extended the previous one byte for byte, which is when a provider's
// prompt cache can serve it. A session remembers the content hash of each
// of its messages ([MessageHash]), and stores hand over those of the
// messages they load ([Session.SetMessageHashes]), so a request costs one
// encoding per message that is new, not per message of the history.
//
// This package imports only the standard library and llm; stores import
// it, never the other way round.
package session
