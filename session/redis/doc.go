// Package redis is a [session.Store] in a Redis database, through go-redis
// (github.com/redis/go-redis/v9), for sessions that several agcore
// processes read and extend and that must be fast more than durable: a
// turn is as durable as the server's persistence is configured (AOF with
// appendfsync always or everysec, RDB snapshots, or none).
//
// # Keys
//
// Under a prefix (WithPrefix, or prefix=P in the URL Open and session.Open
// take; default "agcore:"), one session is four keys and a line of the
// index:
//
//	PREFIX s:ID    hash: inc (incarnation), created, updated (Unix ns), turns,
//	               messages, usage (JSON llm.Usage), cost, prefix (JSON
//	               session.PrefixStats), hashes (little-endian uint64s),
//	               owner, title, model, compaction (JSON {"upto","messages"})
//	               and upto (the compaction's; absent without one)
//	PREFIX m:ID    list: each message's storage JSON, in order
//	PREFIX t:ID    hash: turn id -> turn number (the stored turn ids)
//	PREFIX st:ID   hash: the state bag
//	PREFIX index   hash: ID -> the session's metadata as JSON (updated,
//	               created, turns, messages, owner, title, model, usage,
//	               cost), for List
//	PREFIX version the key layout's version; a newer one is refused
//	               ([ErrLayoutTooNew]), an older one migrated on Open
//	               (version 1's index entries "updated created turns
//	               messages" become JSON, titles derived from the first
//	               prompt)
//
// The store needs one Redis server (or a primary with replicas), not a
// cluster: a session's keys and the index are used in one script.
//
// # Many writers, one session
//
// An append carries the version of the session it was built on (its
// incarnation and turn count, with the totals the turn adds to): one Lua
// script, which Redis runs atomically, stores the turn only if the
// session is still at that version and the turn ID is not already
// stored. A store builds the append on what it last saw of the session
// (its last append or load of it; a session it has not seen is taken for
// new), so an append is one round trip (EVALSHA) with the turn and the
// new totals encoded by the client. When another append came first the
// script changes nothing and hands back the session's current version,
// on which Append builds the turn again and retries, so appends to one
// session, from any number of processes, are applied one at a time, each
// turn whole and contiguous, none lost. The agent needs no handling of its
// own: its turn lands after whatever other runs stored first.
//
// # Faults
//
// The script is all or nothing. When the connection is lost, go-redis
// sends the script again on a new connection; the turn ID check inside
// it makes that safe, so a turn is never stored twice and a caller may
// retry a failed Append with the same turn. Load reads the session in one
// MULTI/EXEC block, so it sees whole turns only.
//
// A Store keeps the messages of the sessions it loaded last decoded in
// memory (WithCacheBytes), by incarnation: the next Load of such a session
// reads only the list's tail from what the store holds.
//
// LoadView reads the totals and the list from the compaction's upto on
// (LRANGE upto -1), never the messages the view replaces.
//
// A session belongs to the owner of the append that made it; the append
// script refuses another owner's turn (session.ErrOwner), atomically.
//
// List reads the whole index (metadata only, no message), in time
// proportional to the number of sessions, and keeps the requested owner's.
//
// Imported, the package registers "redis://…" and "rediss://…" with
// session.Open (see session.Register); session/stores imports every
// store. Opened that way, go-redis's own log lines go to the opener's
// logger at debug level, not to stderr.
//
// This package imports only the standard library, go-redis, llm and
// session (and session's internal helpers and internal/redact), and must
// never import another store or anything above the session layer.
package redis
