package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/internal/stored"
)

// migrations upgrade the schema one version at a time: migrations[i] takes
// a database from version i to i+1. Append new versions; never edit a
// released one, and never lose what an older version stored (a version
// may move it, as 3 moves the messages into their turns' rows).
var migrations = [][]string{
	// 1: the initial schema.
	{
		`CREATE TABLE agcore_sessions (
			id         text COLLATE "C" PRIMARY KEY,
			created_at bigint NOT NULL, -- Unix nanoseconds, UTC
			updated_at bigint NOT NULL,
			turns      integer NOT NULL DEFAULT 0,
			messages   integer NOT NULL DEFAULT 0,
			usage      text NOT NULL DEFAULT '{}', -- JSON llm.Usage, summed over the turns
			cost_usd   double precision NOT NULL DEFAULT 0,
			prefix     text,  -- JSON session.PrefixStats; NULL until a turn tracks requests
			hashes     bytea, -- the last request's prefix hashes, little-endian uint64s
			incarnation bigint NOT NULL -- random, drawn when the row is made
		)`,
		`CREATE INDEX agcore_sessions_by_update ON agcore_sessions (updated_at DESC, id DESC)`,
		`CREATE TABLE agcore_turns (
			session_id text COLLATE "C" NOT NULL REFERENCES agcore_sessions (id) ON DELETE CASCADE,
			seq        integer NOT NULL, -- 0-based order within the session
			turn_id    text NOT NULL,
			time       bigint NOT NULL,
			messages   integer NOT NULL,
			usage      text NOT NULL,
			cost_usd   double precision NOT NULL,
			PRIMARY KEY (session_id, seq),
			UNIQUE (session_id, turn_id)
		)`,
		`CREATE TABLE agcore_messages (
			session_id text COLLATE "C" NOT NULL REFERENCES agcore_sessions (id) ON DELETE CASCADE,
			seq        integer NOT NULL, -- 0-based position in the session
			turn_seq   integer NOT NULL,
			json       bytea NOT NULL,   -- the message's storage JSON, byte for byte
			PRIMARY KEY (session_id, seq)
		)`,
		`CREATE TABLE agcore_state (
			session_id text COLLATE "C" NOT NULL REFERENCES agcore_sessions (id) ON DELETE CASCADE,
			key        text NOT NULL,
			value      text NOT NULL, -- JSON
			PRIMARY KEY (session_id, key)
		)`,
	},
	// 2 (issue 22, stores): what a session keeps beside its messages, so
	// that a listing reads no message and a turn reads only its view:
	// the owner (the principal of the creating append; '' for sessions
	// made before), the title (NULL until derived: backfillTitles derives
	// it from the first user message of sessions made before), the model
	// of the last turn, and the compaction view (its storage JSON and its
	// upto). Listings by owner use agcore_sessions_by_owner.
	{
		`ALTER TABLE agcore_sessions
			ADD COLUMN owner text COLLATE "C" NOT NULL DEFAULT '',
			ADD COLUMN title text,
			ADD COLUMN model text NOT NULL DEFAULT '',
			ADD COLUMN compaction bytea, -- JSON {"upto":N,"messages":[...]}; NULL: none
			ADD COLUMN upto integer NOT NULL DEFAULT 0`,
		`CREATE INDEX agcore_sessions_by_owner ON agcore_sessions (owner, updated_at DESC, id DESC)`,
		`CREATE INDEX agcore_sessions_untitled ON agcore_sessions (id) WHERE title IS NULL`,
	},
	// 3 (issue 23, lean): a turn's messages are one row, its turn's, so an
	// append writes two rows (the session's and the turn's) instead of
	// one per message: agcore_turns gains first (the session-wide index
	// of the turn's first message: the sum of the earlier turns'
	// messages) and msgs (the messages' storage JSON, in order). The
	// messages stored by versions 1 and 2 move into their turns' rows,
	// byte for byte, and agcore_messages is dropped. The tables are
	// locked first, so an append of an older agcore in flight either
	// lands before the move (and moves) or fails after it (its table is
	// gone) rather than storing a turn without its messages. A turn row
	// over 2 kB is compressed as PostgreSQL does by default (measured on
	// a 30-message turn: a tenth of the size for a few microseconds).
	{
		`LOCK TABLE agcore_sessions, agcore_turns, agcore_messages IN ACCESS EXCLUSIVE MODE`,
		`ALTER TABLE agcore_turns
			ADD COLUMN first integer NOT NULL DEFAULT 0,
			ADD COLUMN msgs bytea[] NOT NULL DEFAULT '{}'`,
		`UPDATE agcore_turns AS t SET first = c.first, msgs = coalesce(m.msgs, '{}')
			FROM (SELECT session_id, seq, (sum(messages) OVER (PARTITION BY session_id ORDER BY seq) - messages)::integer AS first
				FROM agcore_turns) AS c
			LEFT JOIN (SELECT session_id, turn_seq, array_agg(json ORDER BY seq) AS msgs
				FROM agcore_messages GROUP BY session_id, turn_seq) AS m ON m.session_id = c.session_id AND m.turn_seq = c.seq
			WHERE t.session_id = c.session_id AND t.seq = c.seq`,
		`ALTER TABLE agcore_turns ALTER COLUMN first DROP DEFAULT, ALTER COLUMN msgs DROP DEFAULT`,
		`DROP TABLE agcore_messages`,
		// The sum of two JSON llm.Usage texts, field by field (append.go).
		`CREATE FUNCTION agcore_usage_add(a text, b text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
			SELECT coalesce(jsonb_object_agg(k, n), '{}')::text FROM (SELECT k, sum(v::numeric) AS n
				FROM (SELECT * FROM jsonb_each_text(a::jsonb) UNION ALL SELECT * FROM jsonb_each_text(b::jsonb)) AS x (k, v)
				GROUP BY k) AS y
		$$`,
	},
}

// SchemaVersion is the schema version this package writes: the number of
// migrations.
const SchemaVersion = 3

// ErrSchemaTooNew is returned (wrapped) by Open when the database holds a
// schema written by a newer agcore than this one.
var ErrSchemaTooNew = errors.New("postgres: database schema is newer than this agcore supports")

// migrate brings the schema (in the connection's current schema, see
// search_path) up to SchemaVersion in one transaction, holding a
// transaction-scoped advisory lock keyed by the schema's name, so that
// processes opening the store at once migrate it once, one after the other.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if len(migrations) != SchemaVersion {
		panic("postgres: SchemaVersion does not match the migrations")
	}
	// A quick check first: a current schema needs no lock.
	if v, err := schemaVersion(ctx, pool); err == nil && v == SchemaVersion {
		return nil
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('agcore.session.migrate:' || current_schema()))`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS agcore_schema (
			version integer NOT NULL,
			one     boolean PRIMARY KEY DEFAULT true CHECK (one)
		)`); err != nil {
			return err
		}
		var v int
		err := tx.QueryRow(ctx, `SELECT version FROM agcore_schema`).Scan(&v)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			v = 0
			if _, err := tx.Exec(ctx, `INSERT INTO agcore_schema (version) VALUES (0)`); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		if v > SchemaVersion || v < 0 {
			return fmt.Errorf("%w: version %d, this agcore knows up to %d; upgrade agcore", ErrSchemaTooNew, v, SchemaVersion)
		}
		for ; v < SchemaVersion; v++ {
			for _, stmt := range migrations[v] {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return fmt.Errorf("migrating to schema version %d: %w", v+1, err)
				}
			}
		}
		_, err = tx.Exec(ctx, `UPDATE agcore_schema SET version = $1`, v)
		return err
	})
}

// checkReadable checks, writing nothing, that the connection's current
// schema holds the store's tables at this agcore's version: a schema the
// search_path names that does not exist, or one without the tables, is
// session.ErrNoStore.
func checkReadable(ctx context.Context, pool *pgxpool.Pool) error {
	var schema *string
	var path string
	if err := pool.QueryRow(ctx, `SELECT current_schema(), current_setting('search_path')`).Scan(&schema, &path); err != nil {
		return err
	}
	if schema == nil {
		return fmt.Errorf("no schema of the search_path %q exists (%w)", path, session.ErrNoStore)
	}
	v, err := schemaVersion(ctx, pool)
	switch {
	case err != nil:
		return err
	case v == 0:
		return fmt.Errorf("schema %q holds no agcore tables (%w)", *schema, session.ErrNoStore)
	case v > SchemaVersion:
		return fmt.Errorf("%w: version %d, this agcore knows up to %d; upgrade agcore", ErrSchemaTooNew, v, SchemaVersion)
	case v < SchemaVersion:
		return fmt.Errorf("postgres: schema %q is at version %d, this agcore reads %d: a command that writes (agcore run) migrates it", *schema, v, SchemaVersion)
	}
	return nil
}

// schemaVersion reads the schema version; 0 when there is no schema.
func schemaVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var v int
	err := q.QueryRow(ctx, `SELECT version FROM agcore_schema`).Scan(&v)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
		return 0, nil
	}
	return v, err
}

// backfillTitles derives the title of the sessions stored before titles
// were kept (title IS NULL, found through the partial index
// agcore_sessions_untitled, so a database with none costs one index
// lookup): the stored.Title of their first user message with text. Each
// session is updated on its own, only if still untitled, so processes
// opening the store at once agree.
func backfillTitles(ctx context.Context, pool *pgxpool.Pool) error {
	for {
		rows, err := pool.Query(ctx, `SELECT id FROM agcore_sessions WHERE title IS NULL LIMIT 256`)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		for _, id := range ids {
			title, err := storedTitle(ctx, pool, id)
			if err != nil {
				return fmt.Errorf("deriving the title of session %q: %w", id, err)
			}
			if _, err := pool.Exec(ctx, `UPDATE agcore_sessions SET title = $2 WHERE id = $1 AND title IS NULL`, id, title); err != nil {
				return err
			}
		}
	}
}

// storedTitle reads session id's turns in order until one has a title.
func storedTitle(ctx context.Context, pool *pgxpool.Pool, id string) (string, error) {
	const batch = 16
	for from := 0; ; from += batch {
		rows, err := pool.Query(ctx, `SELECT msgs FROM agcore_turns WHERE session_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`, id, from, batch)
		if err != nil {
			return "", err
		}
		turns, err := pgx.CollectRows(rows, pgx.RowTo[[][]byte])
		if err != nil {
			return "", err
		}
		var raws []json.RawMessage
		for _, msgs := range turns {
			for _, m := range msgs {
				raws = append(raws, m)
			}
		}
		title, err := stored.TitleOfStored(raws)
		if err != nil || title != "" || len(turns) < batch {
			return title, err
		}
	}
}
