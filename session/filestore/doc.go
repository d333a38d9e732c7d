// Package filestore is a [session.Store] that keeps each session in its own
// append-only JSON Lines file in one directory, durable across crashes.
//
// # Files
//
// Session id X lives in X.jsonl (the log, the only source of truth) and
// X.meta.json (a summary cache for List). Ids are checked with
// [session.ValidateID], so no id names a file outside the directory.
// Files are created with mode 0600, the directory with 0700.
//
// The first line of a log is its header; every further line is one whole
// turn:
//
//	{"agcore_session":2,"id":"X","created_at":"2026-01-05T14:30:12.123456789Z","owner":"alice"}
//	{"turn":"run-1","time":"2026-01-05T14:30:15Z","messages":[{"type":"user","content":[...]},...],"usage":{"input_tokens":120,"output_tokens":30},"cost_usd":0.0021,"state":{"memory":{"n":1}},"state_del":["old"],"prefix":{"requests":1,"prefix_stable":0,"last_divergence":-1,"keep":0,"hashes":[...]},"model":"gpt-4o","title":"Plan a trip","compaction":{"upto":40,"messages":[...]}}
//
// Messages are in their storage JSON (see package llm). "usage", "cost_usd",
// "state", "state_del", "prefix", "model", "title" and "compaction" are
// left out when empty. The header's "owner" is the principal of the
// creating append (left out for the single-user owner ""); an append of
// another owner fails with session.ErrOwner. "title" is the title the
// turn's messages give (the session's is its first turn's that has one),
// "model" the model that answered, "compaction" the compaction view that
// replaces the session's from this turn on. Logs of format 1 (written
// before issue 22: no owner, model, title or compaction) are read, their
// titles derived from their messages, and continued. "state" sets
// keys of the state bag, "state_del" deletes them. "prefix" replaces the
// request-hash statistic; because the hashes are cumulative prefix hashes,
// it stores only the hashes after the first "keep" ones of the previous
// list, so a log grows with the conversation, not with its square.
//
// # Durability
//
// A session file is created whole (header, and on Append the first turn)
// in a temporary file that is fsync'd and then linked into place, after
// which the directory is fsync'd: a session exists completely or not at
// all. Each later Append writes its turn as one line with one write and
// fsyncs the file before returning, so a turn whose Append returned nil
// survives a crash, and a turn is stored whole or not at all: a line is a
// turn only when it ends in a newline and decodes. A torn last line (a
// crash mid-write) is dropped with a log/slog warning when the session is
// read, and cut off by the next Append, so the log stays valid. A bad line
// followed by good ones is not a torn write but corruption, and Load
// reports it as an error instead of guessing.
//
// That this holds beyond the death of the process is tested on a file
// system that loses power (an in-memory stand-in for the directory, which
// the store reaches only through a small internal interface): every write
// not yet fsync'd is lost, except, as a seeded choice, a prefix of a file's
// unsynced bytes (so the file system, not a hand-edited file, makes the
// torn last lines) and a prefix of the unsynced directory changes. The
// power is cut after, and at every file-system operation of, a sequence of
// Creates, Appends and Deletes; the reopened store must hold exactly what
// was acknowledged plus, whole or not at all, the interrupted operation,
// drop and then cut off any torn line, and keep what it takes next. A
// missing fsync of an appended line, of a new log before its link, or of
// the directory after a log is linked or removed fails those tests; a
// SIGKILL test cannot see one, as the kernel's page cache outlives the
// process.
//
// The .meta.json file records the summary List shows (owner, title, model,
// turns, messages, usage, cost, times) together with the log size it
// describes, and its own version "v" (a summary of another version is
// rebuilt); it is written after the log and never fsync'd, and
// List rebuilds it from the log whenever the sizes disagree, so it can be
// stale or missing after a crash but never wrong.
//
// # Concurrency
//
// A Store is safe for concurrent use: operations on one session are
// serialized, different sessions proceed in parallel. The store assumes it
// is the only writer of its directory: do not open one directory with two
// Stores at once, in one process or in several. On case-insensitive file
// systems (macOS and Windows defaults), ids that differ only in case name
// the same files; use ids from [session.NewID], which are lower case.
//
// # Cost
//
// Append costs one write and one fsync (plus the small summary file).
// Load reads and decodes the whole log; LoadView reads and scans the whole
// log too (one file) but decodes only the messages after the compaction's
// upto. Each load hashes the storage JSON of the messages it returns
// for the request-hash statistic ([session.Session.SetMessageHashes]),
// which spares the agent encoding the history again. List reads the
// directory and one small summary file per session, so it is linear in the
// number of sessions; use the sqlite store for many thousands of sessions.
//
// Imported, the package registers "file:DIR" with session.Open (see
// session.Register); session/stores imports every store.
//
// This package imports only the standard library, llm and session (and
// session's internal helpers), and must never import another store or
// anything above the session layer.
package filestore
