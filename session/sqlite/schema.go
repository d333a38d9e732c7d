package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations upgrade the schema one version at a time: migrations[i] takes
// a database from user_version i to i+1. Append new versions; never edit a
// released one.
var migrations = [][]string{
	// 1: the initial schema.
	{
		`CREATE TABLE sessions (
			id         TEXT    PRIMARY KEY,
			created_at INTEGER NOT NULL, -- Unix nanoseconds, UTC
			updated_at INTEGER NOT NULL,
			turns      INTEGER NOT NULL DEFAULT 0,
			messages   INTEGER NOT NULL DEFAULT 0,
			usage      TEXT    NOT NULL DEFAULT '{}', -- JSON llm.Usage, summed over the turns
			cost_usd   REAL    NOT NULL DEFAULT 0,
			prefix     TEXT,                          -- JSON session.PrefixStats; NULL until a turn tracks requests
			hashes     BLOB                           -- the last request's prefix hashes, little-endian uint64s
		) STRICT`,
		`CREATE INDEX sessions_by_update ON sessions (updated_at DESC, id DESC)`,
		`CREATE TABLE turns (
			session_id TEXT    NOT NULL,
			seq        INTEGER NOT NULL, -- 0-based order within the session
			turn_id    TEXT    NOT NULL,
			time       INTEGER NOT NULL,
			messages   INTEGER NOT NULL, -- how many messages the turn added
			usage      TEXT    NOT NULL, -- JSON llm.Usage
			cost_usd   REAL    NOT NULL,
			PRIMARY KEY (session_id, seq),
			UNIQUE (session_id, turn_id)
		) STRICT, WITHOUT ROWID`,
		`CREATE TABLE messages (
			session_id TEXT    NOT NULL,
			seq        INTEGER NOT NULL, -- 0-based position in the session
			turn_seq   INTEGER NOT NULL,
			json       TEXT    NOT NULL, -- the message's storage JSON
			PRIMARY KEY (session_id, seq)
		) STRICT`, // a rowid table: messages can be large
		`CREATE TABLE state (
			session_id TEXT NOT NULL,
			key        TEXT NOT NULL,
			value      TEXT NOT NULL, -- JSON
			PRIMARY KEY (session_id, key)
		) STRICT, WITHOUT ROWID`,
	},
	// 2: sessions.incarnation, a random number drawn when the sessions row
	// is made, so that a session deleted and made again is never taken
	// for the one before it (0 for sessions made before version 2).
	{
		`ALTER TABLE sessions ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 0`,
	},
}

// SchemaVersion is the schema version this package writes: the number of
// migrations.
const SchemaVersion = 2

// migrate brings the database up to SchemaVersion, one transaction per
// version, and refuses a database newer than that.
func migrate(ctx context.Context, db *sql.DB) error {
	if len(migrations) != SchemaVersion {
		panic("sqlite: SchemaVersion does not match the migrations")
	}
	for {
		done, err := migrateOne(ctx, db)
		if err != nil || done {
			return err
		}
	}
}

func migrateOne(ctx context.Context, db *sql.DB) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: another process migrating waits
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	var v int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return false, err
	}
	switch {
	case v == len(migrations):
		return true, tx.Commit()
	case v > len(migrations) || v < 0:
		return false, fmt.Errorf("database schema version %d is newer than this agcore supports (%d)", v, len(migrations))
	}
	for _, stmt := range migrations[v] {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return false, fmt.Errorf("migrating to schema version %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, v+1)); err != nil {
		return false, err
	}
	return false, tx.Commit()
}
