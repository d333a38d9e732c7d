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
// # Opening a store by its URL
//
// [Open] opens a store from the URL a user gives, as database/sql does
// for databases: each store package registers an [Opener] for its
// schemes ([Register]) when it is imported, and session/stores imports
// all five, so a program that takes --store from its users writes
//
//	import _ "github.com/agcore/agcore/session/stores"
//
//	st, err := session.Open(ctx, url) // sqlite:PATH, file:DIR, memory:, postgres://…, redis://…
//	if err != nil {
//		return err // one line: "store redis://:xxxxx@cache:6379/0: …"
//	}
//	defer st.Close()
//	// st is a Store; st.Description names it for messages, st.Durable
//	// says whether its sessions outlive the process.
//
// "" and "sqlite:" are agcore's own database, $AGCORE_HOME/agcore.db
// (session/sqlite's DefaultPath). [ReadOnly] opens a store for reading
// only: nothing is created, and a store named explicitly that does not
// exist is [ErrNoStore]. [Check] finds a URL of no known kind, or written
// wrong for its kind, without connecting. [Redact] is how every URL is
// shown: the password, and query values named like secrets, become
// "xxxxx". Every error of Open is one line that names the store by its
// redacted URL and holds none of its secrets, whatever the driver said;
// it wraps the driver's error, so errors.Is finds [ErrUnavailable] when
// the server could not be reached. The drivers' own loggers are quiet
// (go-redis's lines go to [WithLogger]'s logger at debug level; pgx logs
// nothing).
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
// This package imports only the standard library, llm and
// internal/redact (agcore's one URL redaction); stores import it, never
// the other way round: they register with it.
package session
