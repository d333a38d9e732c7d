package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/postgres"
	"github.com/agcore/agcore/session/sessiontest"
)

// schemaV1 is the schema the releases before issue 22 wrote (version 1;
// unchanged up to commit 899c59a), copied here as a fixture: the
// migrations in schema.go must take a database written by it forward.
var schemaV1 = []string{
	`CREATE TABLE agcore_schema (version integer NOT NULL, one boolean PRIMARY KEY DEFAULT true CHECK (one))`,
	`INSERT INTO agcore_schema (version) VALUES (1)`,
	`CREATE TABLE agcore_sessions (
		id         text COLLATE "C" PRIMARY KEY,
		created_at bigint NOT NULL,
		updated_at bigint NOT NULL,
		turns      integer NOT NULL DEFAULT 0,
		messages   integer NOT NULL DEFAULT 0,
		usage      text NOT NULL DEFAULT '{}',
		cost_usd   double precision NOT NULL DEFAULT 0,
		prefix     text,
		hashes     bytea,
		incarnation bigint NOT NULL
	)`,
	`CREATE INDEX agcore_sessions_by_update ON agcore_sessions (updated_at DESC, id DESC)`,
	`CREATE TABLE agcore_turns (
		session_id text COLLATE "C" NOT NULL REFERENCES agcore_sessions (id) ON DELETE CASCADE,
		seq        integer NOT NULL,
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
		seq        integer NOT NULL,
		turn_seq   integer NOT NULL,
		json       bytea NOT NULL,
		PRIMARY KEY (session_id, seq)
	)`,
	`CREATE TABLE agcore_state (
		session_id text COLLATE "C" NOT NULL REFERENCES agcore_sessions (id) ON DELETE CASCADE,
		key        text NOT NULL,
		value      text NOT NULL,
		PRIMARY KEY (session_id, key)
	)`,
}

// oldSession writes session id the way the previous version's Append did.
func oldSession(t *testing.T, pool *pgxpool.Pool, id string, at time.Time, turns ...[]llm.Message) {
	t.Helper()
	ctx := context.Background()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	n := len(turns)
	total := 0
	for _, msgs := range turns {
		total += len(msgs)
	}
	exec(`INSERT INTO agcore_sessions (id, created_at, updated_at, turns, messages, usage, cost_usd, prefix, hashes, incarnation)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, id, at.UnixNano(), at.Add(time.Duration(n-1)*time.Second).UnixNano(), n, total,
		fmt.Sprintf(`{"input_tokens":%d,"output_tokens":%d}`, 100*n, 10*n), 0.01*float64(n),
		`{"requests":1,"prefix_stable":0,"last_divergence":-1,"hash_version":2}`, []byte{1, 0, 0, 0, 0, 0, 0, 0}, 4242)
	seq := 0
	for i, msgs := range turns {
		exec(`INSERT INTO agcore_turns (session_id, seq, turn_id, time, messages, usage, cost_usd) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			id, i, fmt.Sprintf("run-%d", i), at.Add(time.Duration(i)*time.Second).UnixNano(), len(msgs), `{"input_tokens":100,"output_tokens":10}`, 0.01)
		for _, m := range msgs {
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			exec(`INSERT INTO agcore_messages (session_id, seq, turn_seq, json) VALUES ($1, $2, $3, $4)`, id, seq, i, data)
			seq++
		}
	}
	exec(`INSERT INTO agcore_state (session_id, key, value) VALUES ($1, 'agcore', '{"model":"old-model"}')`, id)
}

// A database the previous version wrote is migrated on Open; its
// sessions list with titles derived from their first prompt, load, and
// continue as the single-user owner's.
func TestPreviousVersionDatabase(t *testing.T) {
	u := newSchema(t)
	pool, err := pgxpool.New(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	for _, q := range schemaV1 {
		if _, err := pool.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 1, 5, 14, 30, 0, 0, time.UTC)
	oldSession(t, pool, "first", base,
		[]llm.Message{llm.SystemText("be brief"), llm.UserText("\n  Plan a trip  to Lyon\nin May"), llm.AssistantText("Sure.")},
		sessiontest.Conversation("more", 4))
	// A turn without messages between two: version 3 numbers each turn's
	// first message from the turns before it.
	oldSession(t, pool, "second", base.Add(time.Hour), sessiontest.Conversation("q", 4), nil, sessiontest.Conversation("r", 3))

	s := open(t, u)
	var v int
	if err := pool.QueryRow(context.Background(), `SELECT version FROM agcore_schema`).Scan(&v); err != nil || v != postgres.SchemaVersion {
		t.Fatalf("schema version %d, %v; want %d", v, err, postgres.SchemaVersion)
	}
	page, err := s.List(t.Context(), session.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Sessions) != 2 {
		t.Fatalf("List = %+v", page.Sessions)
	}
	second, first := page.Sessions[0], page.Sessions[1]
	if first.ID != "first" || first.Title != "Plan a trip to Lyon" || first.Owner != "" || first.Turns != 2 || first.Messages != 7 ||
		first.Usage != (llm.Usage{InputTokens: 200, OutputTokens: 20}) || first.CostUSD != 0.02 {
		t.Errorf("old session listed as %+v", first)
	}
	if second.ID != "second" || second.Title != "[q 0] What is the weather in city 0, and should I bring an umbrella tomorrow?" {
		t.Errorf("old session listed as %+v", second)
	}
	sess, err := s.Load(t.Context(), "first")
	if err != nil || len(sess.Messages) != 7 || sess.Title != "Plan a trip to Lyon" || string(sess.State["agcore"]) != `{"model":"old-model"}` {
		t.Fatalf("old session loaded as %+v, %v", sess, err)
	}
	if err := s.Append(t.Context(), "first", session.Turn{ID: "run-0", Messages: sessiontest.Conversation("dup", 2)}); err != nil {
		t.Fatal(err) // an old turn id: a no-op
	}
	if err := s.Append(t.Context(), "first", session.Turn{ID: "run-new", Model: "new-model",
		Messages: sessiontest.Conversation("new", 4), Compaction: &session.Compaction{Upto: 9, Messages: []llm.Message{llm.UserText("summary")}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(t.Context(), "first", session.Turn{ID: "other", Owner: "alice", Messages: sessiontest.Conversation("x", 1)}); !errors.Is(err, session.ErrOwner) {
		t.Fatalf("another owner's append to an old session: %v", err)
	}
	view, err := s.LoadView(t.Context(), "first")
	if err != nil || view.Base != 9 || len(view.Messages) != 2 || view.Turns != 3 || view.Model != "new-model" || view.Title != "Plan a trip to Lyon" {
		t.Fatalf("LoadView after continuing: %+v, %v", view, err)
	}
	// The messages moved into their turns' rows (schema version 3) load
	// in order, whole or from a compaction's upto inside a moved turn.
	wantSecond := append(sessiontest.Conversation("q", 4), sessiontest.Conversation("r", 3)...)
	sess, err = s.Load(t.Context(), "second")
	if err != nil || len(sess.Messages) != len(wantSecond) || sess.Turns != 3 {
		t.Fatalf("old session loaded as %+v, %v", sess, err)
	}
	for i, m := range sess.Messages {
		if m.Text() != wantSecond[i].Text() {
			t.Fatalf("message %d moved as %q, want %q", i, m.Text(), wantSecond[i].Text())
		}
	}
	if err := s.Append(t.Context(), "second", session.Turn{ID: "compact", Messages: sessiontest.Conversation("s", 1),
		Compaction: &session.Compaction{Upto: 6, Messages: []llm.Message{llm.UserText("summary")}}}); err != nil {
		t.Fatal(err)
	}
	view, err = open(t, u, postgres.WithCacheBytes(0)).LoadView(t.Context(), "second")
	if err != nil || view.Base != 6 || len(view.Messages) != 2 || view.Messages[0].Text() != wantSecond[6].Text() {
		t.Fatalf("LoadView from inside a moved turn: %+v, %v", view, err)
	}
	var gone bool
	if err := pool.QueryRow(context.Background(), `SELECT to_regclass('agcore_messages') IS NULL`).Scan(&gone); err != nil || !gone {
		t.Errorf("agcore_messages left after the move: %v", err)
	}
	// A second store opening the migrated database finds nothing to do.
	open(t, u)
}
