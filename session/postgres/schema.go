package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations upgrade the schema one version at a time: migrations[i] takes
// a database from version i to i+1. Append new versions; never edit a
// released one, and never drop or rewrite what an older version stored.
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
}

// SchemaVersion is the schema version this package writes: the number of
// migrations.
const SchemaVersion = 1

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
