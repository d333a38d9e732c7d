package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sessiontest"
	"github.com/agcore/agcore/session/sqlite"
)

// schemaV1 and schemaV2Delta are the schema the releases before issue 22
// wrote (user_version 1, then 2; unchanged up to commit 899c59a), copied
// here as fixtures: the migrations in schema.go must take a database
// written by them forward, and must never be edited.
var schemaV1 = []string{
	`CREATE TABLE sessions (
		id         TEXT    PRIMARY KEY,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		turns      INTEGER NOT NULL DEFAULT 0,
		messages   INTEGER NOT NULL DEFAULT 0,
		usage      TEXT    NOT NULL DEFAULT '{}',
		cost_usd   REAL    NOT NULL DEFAULT 0,
		prefix     TEXT,
		hashes     BLOB
	) STRICT`,
	`CREATE INDEX sessions_by_update ON sessions (updated_at DESC, id DESC)`,
	`CREATE TABLE turns (
		session_id TEXT    NOT NULL,
		seq        INTEGER NOT NULL,
		turn_id    TEXT    NOT NULL,
		time       INTEGER NOT NULL,
		messages   INTEGER NOT NULL,
		usage      TEXT    NOT NULL,
		cost_usd   REAL    NOT NULL,
		PRIMARY KEY (session_id, seq),
		UNIQUE (session_id, turn_id)
	) STRICT, WITHOUT ROWID`,
	`CREATE TABLE messages (
		session_id TEXT    NOT NULL,
		seq        INTEGER NOT NULL,
		turn_seq   INTEGER NOT NULL,
		json       TEXT    NOT NULL,
		PRIMARY KEY (session_id, seq)
	) STRICT`,
	`CREATE TABLE state (
		session_id TEXT NOT NULL,
		key        TEXT NOT NULL,
		value      TEXT NOT NULL,
		PRIMARY KEY (session_id, key)
	) STRICT, WITHOUT ROWID`,
	`PRAGMA user_version = 1`,
}

var schemaV2Delta = []string{
	`ALTER TABLE sessions ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 0`,
	`PRAGMA user_version = 2`,
}

// oldSession writes session id the way the previous version's Append did:
// its sessions row, one turns row per turn, its messages and its state.
func oldSession(t *testing.T, db *sql.DB, id string, v2 bool, at time.Time, turns ...[]llm.Message) {
	t.Helper()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	seq := 0
	for i, msgs := range turns {
		exec(`INSERT INTO turns (session_id, seq, turn_id, time, messages, usage, cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			id, i, "run-"+string(rune('a'+i)), at.Add(time.Duration(i)*time.Second).UnixNano(), len(msgs), `{"input_tokens":100,"output_tokens":10}`, 0.01)
		for _, m := range msgs {
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			exec(`INSERT INTO messages (session_id, seq, turn_seq, json) VALUES (?, ?, ?, ?)`, id, seq, i, string(data))
			seq++
		}
	}
	n := len(turns)
	usage := `{"input_tokens":` + itoa(100*n) + `,"output_tokens":` + itoa(10*n) + `}`
	updated := at.Add(time.Duration(n-1) * time.Second).UnixNano()
	if v2 {
		exec(`INSERT INTO sessions (id, created_at, updated_at, turns, messages, usage, cost_usd, prefix, hashes, incarnation)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, at.UnixNano(), updated, n, seq, usage, 0.01*float64(n),
			`{"requests":1,"prefix_stable":0,"last_divergence":-1,"hash_version":2}`, []byte{1, 0, 0, 0, 0, 0, 0, 0}, 12345)
	} else {
		exec(`INSERT INTO sessions (id, created_at, updated_at, turns, messages, usage, cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			id, at.UnixNano(), updated, n, seq, usage, 0.01*float64(n))
	}
	exec(`INSERT INTO state (session_id, key, value) VALUES (?, 'agcore', '{"model":"old-model"}')`, id)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// oldDatabase makes a database the previous version wrote (schema
// version 2, or 1 when !v2) holding the sessions "first" (two turns, its
// prompt on the second line of a multi-line message after a system
// message) and "second".
func oldDatabase(t *testing.T, v2 bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	db := rawDB(t, path)
	stmts := schemaV1
	if v2 {
		stmts = append(append([]string{}, schemaV1...), schemaV2Delta...)
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 1, 5, 14, 30, 0, 0, time.UTC)
	oldSession(t, db, "first", v2, base,
		[]llm.Message{llm.SystemText("be brief"), llm.UserText("\n  Plan a trip  to Lyon\nin May"), llm.AssistantText("Sure.")},
		sessiontest.Conversation("more", 4))
	oldSession(t, db, "second", v2, base.Add(time.Hour), sessiontest.Conversation("q", 4))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A database the previous version wrote opens (migrated), lists with
// titles derived from the first prompt and the stored totals, loads, and
// continues; its sessions belong to the single-user owner.
func TestPreviousVersionDatabase(t *testing.T) {
	t.Parallel()
	for _, v2 := range []bool{true, false} {
		path := oldDatabase(t, v2)
		// Read-only, an old schema is refused until a writer migrates it.
		if _, err := sqlite.Open(t.Context(), path, sqlite.ReadOnly()); err == nil {
			t.Fatal("a read-only open of an unmigrated database succeeded")
		}
		s := open(t, path)
		page, err := s.List(t.Context(), session.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Sessions) != 2 {
			t.Fatalf("List = %+v", page.Sessions)
		}
		second, first := page.Sessions[0], page.Sessions[1]
		if first.ID != "first" || first.Title != "Plan a trip to Lyon" || first.Owner != "" || first.Turns != 2 || first.Messages != 7 ||
			first.Usage != (llm.Usage{InputTokens: 200, OutputTokens: 20}) || first.CostUSD != 0.02 || first.Model != "" {
			t.Errorf("old session listed as %+v", first)
		}
		if second.ID != "second" || second.Title != "[q 0] What is the weather in city 0, and should I bring an umbrella tomorrow?" {
			t.Errorf("old session listed as %+v", second)
		}
		sess := load(t, s, "first")
		if len(sess.Messages) != 7 || sess.Title != "Plan a trip to Lyon" || string(sess.State["agcore"]) != `{"model":"old-model"}` {
			t.Fatalf("old session loaded as %+v", sess)
		}
		view, err := s.LoadView(t.Context(), "first")
		if err != nil || view.Base != 0 || len(view.Messages) != 7 || view.Compaction != nil {
			t.Fatalf("LoadView of an old session: %+v, %v", view, err)
		}
		// It continues, as the single-user owner's.
		if err := s.Append(t.Context(), "first", session.Turn{ID: "run-a", Messages: sessiontest.Conversation("dup", 2)}); err != nil {
			t.Fatal(err) // an old turn id: a no-op
		}
		if err := s.Append(t.Context(), "first", session.Turn{ID: "run-new", Model: "new-model",
			Messages: sessiontest.Conversation("new", 4), Compaction: &session.Compaction{Upto: 9, Messages: []llm.Message{llm.UserText("summary")}}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(t.Context(), "first", session.Turn{ID: "other", Owner: "alice", Messages: sessiontest.Conversation("x", 1)}); !errors.Is(err, session.ErrOwner) {
			t.Fatalf("another owner's append to an old session: %v", err)
		}
		view, err = s.LoadView(t.Context(), "first")
		if err != nil || view.Base != 9 || len(view.Messages) != 2 || view.Turns != 3 || view.Model != "new-model" || view.Title != "Plan a trip to Lyon" {
			t.Fatalf("LoadView after continuing: %+v, %v", view, err)
		}
		s.Close()
		// Migrated, it opens read-only too.
		ro, err := sqlite.Open(t.Context(), path, sqlite.ReadOnly())
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ro.Load(t.Context(), "first"); err != nil || len(got.Messages) != 11 {
			t.Fatalf("read-only load after migrating: %v", err)
		}
		ro.Close()
	}
}
