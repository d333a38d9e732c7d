package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agcore/agcore/session/internal/stored"
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
	// 3 (issue 22, stores): what a session keeps beside its messages, so
	// that a listing reads no message and a turn reads only its view:
	// the owner (the principal of the creating append; '' for sessions
	// made before), the title (NULL until derived: backfillTitles derives
	// it from the first user message of sessions made before), the model
	// of the last turn, and the compaction view (its storage JSON and its
	// upto). Listings by owner use sessions_by_owner.
	{
		`ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE sessions ADD COLUMN title TEXT`,
		`ALTER TABLE sessions ADD COLUMN model TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE sessions ADD COLUMN compaction TEXT`, // JSON {"upto":N,"messages":[...]}; NULL: none
		`ALTER TABLE sessions ADD COLUMN upto INTEGER NOT NULL DEFAULT 0`,
		`CREATE INDEX sessions_by_owner ON sessions (owner, updated_at DESC, id DESC)`,
		`CREATE INDEX sessions_untitled ON sessions (id) WHERE title IS NULL`,
	},
}

// SchemaVersion is the schema version this package writes: the number of
// migrations.
const SchemaVersion = 3

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

// backfillTitles derives the title of the sessions stored before titles
// were kept (title IS NULL, found through the partial index
// sessions_untitled, so a database with none costs one index lookup): the
// stored.Title of their first user message with text. Each session is
// updated in its own short transaction, only if still untitled, so
// processes opening the database at once agree and writers wait little.
func backfillTitles(ctx context.Context, db *sql.DB) error {
	for {
		rows, err := db.QueryContext(ctx, `SELECT id FROM sessions WHERE title IS NULL LIMIT 256`)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		for _, id := range ids {
			title, err := storedTitle(ctx, db, id)
			if err != nil {
				return fmt.Errorf("deriving the title of session %q: %w", id, err)
			}
			if _, err := db.ExecContext(ctx, `UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL`, title, id); err != nil {
				return err
			}
		}
	}
}

// storedTitle reads session id's messages in order until one has a
// title.
func storedTitle(ctx context.Context, db *sql.DB, id string) (string, error) {
	const batch = 16
	for from := 0; ; from += batch {
		rows, err := db.QueryContext(ctx, `SELECT json FROM messages WHERE session_id = ? AND seq >= ? ORDER BY seq LIMIT ?`, id, from, batch)
		if err != nil {
			return "", err
		}
		var raws []json.RawMessage
		for rows.Next() {
			var raw []byte
			if err := rows.Scan(&raw); err != nil {
				rows.Close()
				return "", err
			}
			raws = append(raws, raw)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return "", err
		}
		title, err := stored.TitleOfStored(raws)
		if err != nil || title != "" || len(raws) < batch {
			return title, err
		}
	}
}
