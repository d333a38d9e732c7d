// Package sqlite is the embedded default [session.Store]: one SQLite
// database file through the pure-Go driver modernc.org/sqlite (no cgo).
//
// # Durability
//
// The database runs in WAL mode with synchronous=FULL: every Append is one
// transaction whose commit fsyncs the write-ahead log before Append
// returns, so a turn whose Append returned nil survives a crash or a power
// cut, and a turn is stored whole or not at all. (synchronous=NORMAL would
// skip that fsync and could lose the last turns on power loss, which a
// session store must not.) Writes are serialized on one connection, so
// they never wait in SQLite's busy handler; readers use their own
// connections and run beside the writer. A busy timeout covers another
// process holding the database.
//
// The driver takes no Go file system for writes, so SQLite's fsyncs cannot
// be intercepted in tests; what the store controls is tested instead: an
// Append made to fail inside its transaction, after rows were written,
// leaves the session as it was, row for row; the writer connection runs
// WAL with synchronous=FULL, asked for in its own connection string; and
// copies of the database and WAL files as an Append leaves them, or cut
// anywhere within its commit, open holding whole turns only.
//
// # Schema
//
// The schema is versioned with PRAGMA user_version and upgraded on Open by
// an ordered list of migrations, each in its own transaction; a database
// newer than this code is refused. Version 3:
//
//	sessions (id TEXT PRIMARY KEY, created_at, updated_at INTEGER (Unix ns, UTC),
//	          turns, messages INTEGER, usage TEXT (JSON llm.Usage), cost_usd REAL,
//	          prefix TEXT (JSON session.PrefixStats, NULL when untracked),
//	          hashes BLOB (little-endian uint64s),
//	          incarnation INTEGER (random, drawn when the row is made; 0 for
//	          sessions made under version 1),
//	          owner TEXT (the creating append's principal; '' before version 3),
//	          title TEXT (stored.Title of the first prompt; NULL until derived),
//	          model TEXT, compaction TEXT (JSON {"upto","messages"}; NULL: none),
//	          upto INTEGER (the compaction's))
//	          index (updated_at DESC, id DESC) for List of every owner,
//	          (owner, updated_at DESC, id DESC) for List of one,
//	          (id) WHERE title IS NULL for the title backfill
//	turns    (session_id, seq) PRIMARY KEY, UNIQUE (session_id, turn_id),
//	          time INTEGER, messages INTEGER, usage TEXT, cost_usd REAL
//	messages (session_id, seq) PRIMARY KEY, turn_seq INTEGER, json TEXT
//	          (the message's storage JSON; see package llm)
//	state    (session_id, key) PRIMARY KEY, value TEXT (JSON)
//
// Session totals live in the sessions row and are updated in the same
// transaction as the turn, so they cannot disagree with the turns. The
// unique (session_id, turn_id) makes Append idempotent; the owner check
// (session.ErrOwner) is made in the same transaction. Version 1 is
// version 2 without the incarnation column, version 2 version 3 without
// owner, title, model, compaction and upto: a writable Open of such a
// database migrates it and derives the titles of its sessions from their
// first prompt. List reads only sessions rows; LoadView reads the messages
// WHERE seq >= upto.
//
// # Loading
//
// A Store keeps the messages of the sessions it loaded last decoded in
// memory (up to WithCacheBytes of their storage JSON), each with its
// content hash (session.StoredMessageHash) for the request-hash statistic.
// Within one incarnation of a session, rows are only ever appended, so the
// next Load of such a session reads, in its read transaction, the sessions
// row and only the message rows numbered from what the store holds: what
// this store or any other process appended since. A session deleted and
// made again has another incarnation and is read whole. Every Load returns
// a copy the caller may change.
//
// Imported, the package registers "sqlite:PATH" with session.Open (see
// session.Register; "sqlite:" alone is agcore's database, DefaultPath);
// session/stores imports every store.
//
// This package imports only the standard library, the SQLite driver, llm
// and session (and session's internal helpers), and must never import
// another store or anything above the session layer.
package sqlite
