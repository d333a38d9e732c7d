// Package postgres is a [session.Store] in a PostgreSQL database, through
// pgx (github.com/jackc/pgx/v5) and its connection pool, for sessions that
// several agcore processes, on one machine or many, read and extend.
//
// # Many writers, one session
//
// The rule: appends to one session are serialized, never merged or
// refused. An append is one statement, in its own transaction: it makes
// the session's row or updates it (INSERT ... ON CONFLICT DO UPDATE, or
// UPDATE for a session the store has seen), which takes the row's lock,
// so when two processes append to the same session at once the second
// waits until the first commits and then adds its turn after it, reading
// the row as the first left it: every turn is stored whole and contiguous
// (its messages are never interleaved with another turn's), none is lost,
// and the session's totals are summed over every turn, in SQL. The owner
// and compaction checks are the update's condition, so they are made
// under the same lock. A turn ID already stored in the session makes
// Append a no-op (the unique index on the turn ID fails the statement,
// and nothing of it is stored), so a turn is never stored twice, whoever
// retries it. The agent needs no handling of its own: a run's turn is its
// input followed by its transcript, and it lands after whatever other
// runs committed first (a run that started on an older history does not
// see the turns that landed meanwhile, as with two runs of one process on
// one session).
//
// The statement is prepared once per connection (pgx's statement cache),
// so an append costs one round trip and one commit. The usage totals are
// summed in Go when the stored text is the one the store last saw of the
// session (its last append or load), in SQL otherwise.
//
// # Faults
//
// A turn is written in one statement, so it is stored whole or not at
// all. When the connection is lost (the server restarted, the backend
// terminated) Append tries again with the same turn (WithRetries): if the
// first attempt's commit had landed, the retry finds the turn and does
// nothing. An error Append returns therefore means the turn is stored
// once or not at all; the caller may retry with the same turn ID.
// Context deadlines and cancellation are honoured on every call.
//
// # Schema
//
// The tables live in the connection's current schema (set search_path in
// the connection string to pick one). The schema is versioned in the
// agcore_schema table and created or upgraded by Open, in one transaction
// holding an advisory lock (pg_advisory_xact_lock) keyed by the schema's
// name, so processes that start at once migrate it once. Migrations never
// lose what an older version stored; a database whose schema is newer
// than this code is refused with [ErrSchemaTooNew]. Version 3:
//
//	agcore_sessions (id text PRIMARY KEY, created_at, updated_at bigint (Unix ns, UTC),
//	                 turns, messages integer, usage text (JSON llm.Usage),
//	                 cost_usd double precision, prefix text (JSON session.PrefixStats),
//	                 hashes bytea (little-endian uint64s),
//	                 incarnation bigint (random, drawn when the row is made),
//	                 owner text (the creating append's principal; '' before version 2),
//	                 title text (stored.Title of the first prompt; NULL until derived),
//	                 model text, compaction bytea (JSON {"upto","messages"}; NULL: none),
//	                 upto integer (the compaction's))
//	                 index (updated_at DESC, id DESC) for List of every owner,
//	                 (owner, updated_at DESC, id DESC) for List of one,
//	                 (id) WHERE title IS NULL for the title backfill
//	agcore_turns    (session_id, seq) PRIMARY KEY, UNIQUE (session_id, turn_id),
//	                 time bigint, messages integer, usage text, cost_usd,
//	                 first integer (the session-wide index of the turn's first message),
//	                 msgs bytea[] (the messages' storage JSON, byte for byte, in order)
//	agcore_state    (session_id, key) PRIMARY KEY, value text (JSON)
//	agcore_usage_add(text, text) the field-by-field sum of two JSON llm.Usage
//
// Version 1 (the releases before issue 22) is version 2 without owner,
// title, model, compaction and upto; Open migrates it and derives the
// titles of its sessions from their first prompt. Versions 1 and 2 kept
// one row per message (agcore_messages: (session_id, seq) PRIMARY KEY,
// turn_seq, json bytea); version 3 keeps a turn's messages in its turn's
// row, so an append writes two rows whatever its size, and Open moves the
// messages of an older database there (locking the tables while it does:
// stop older agcores first, or their appends fail once the move is
// done). The owner check (session.ErrOwner) is made under the session
// row's lock, in the append's statement. List reads only agcore_sessions
// rows; LoadView reads the turns from the one holding message upto.
//
// Ids use the "C" collation, so the listing order is the byte order every
// store uses. Loads read in one repeatable-read transaction and hand over
// the content hash of each message (session.StoredMessageHash).
//
// # Loading
//
// A Store keeps the messages of the sessions it loaded last decoded in
// memory (WithCacheBytes). Within one incarnation of a session rows are
// only ever appended, so the next Load of such a session reads the
// sessions row and only the turns holding messages after what it holds:
// what this or any other process appended since. A session deleted and
// made again has another incarnation and is read whole.
//
// # Connection settings
//
// Open takes a pgx connection string (postgres://user@host:5432/db?...),
// including pool settings such as pool_max_conns; a password may be in the
// URL or come from PGPASSWORD or ~/.pgpass, as libpq's. Durability is the
// server's: with synchronous_commit on (the default) a turn whose Append
// returned nil is on disk.
//
// Imported, the package registers "postgres://…" and "postgresql://…"
// with session.Open (see session.Register); session/stores imports every
// store.
//
// This package imports only the standard library, pgx, llm and session
// (and session's internal helpers), and must never import another store or
// anything above the session layer.
package postgres
