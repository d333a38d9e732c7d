package sqlite_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sessiontest"
	"github.com/agcore/agcore/session/sqlite"
)

func openWith(tb testing.TB, path string, opts ...sqlite.Option) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(tb.Context(), path, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestContractWithSmallOrNoCache(t *testing.T) {
	t.Parallel()
	for _, size := range []int64{0, 600} {
		t.Run(fmt.Sprintf("cache=%d", size), func(t *testing.T) {
			sessiontest.Run(t, func(t *testing.T) session.Store {
				return openWith(t, filepath.Join(t.TempDir(), "sessions.db"), sqlite.WithCacheBytes(size))
			})
		})
	}
}

func load(t *testing.T, s session.Store, id string) *session.Session {
	t.Helper()
	sess, err := s.Load(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

func appendTurn(t *testing.T, s session.Store, id, turn string, msgs []llm.Message) {
	t.Helper()
	if err := s.Append(t.Context(), id, session.Turn{ID: turn, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
}

func sameMessages(t *testing.T, what string, got, want []llm.Message) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: %d messages, want %d (or they differ)", what, len(got), len(want))
	}
}

// Two stores on one file stand in for two processes: what the other one
// appends is seen by the next Load, though the first store holds the
// session decoded.
func TestLoadSeesTheOtherWritersTurns(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	a, b := open(t, path), open(t, path)
	var want []llm.Message
	for i := range 6 {
		w := []session.Store{a, b}[i%2]
		tag := fmt.Sprint("t", i)
		appendTurn(t, w, "shared", tag, sessiontest.Conversation(tag, 4))
		want = append(want, sessiontest.Conversation(tag, 4)...)
		sameMessages(t, fmt.Sprintf("a after turn %d", i), load(t, a, "shared").Messages, want)
		sameMessages(t, fmt.Sprintf("b after turn %d", i), load(t, b, "shared").Messages, want)
	}
}

// A Load of a session the store holds reads only the rows appended since:
// a row changed behind the store's back (nothing in this package ever
// changes one) is not read again, while a store that does not hold the
// session reads it.
func TestLoadReadsOnlyTheNewRows(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	appendTurn(t, s, "x", "1", sessiontest.Conversation("one", 4))
	first := load(t, s, "x")
	db := rawDB(t, path)
	other, _ := json.Marshal(llm.UserText("changed behind the store's back"))
	if _, err := db.Exec(`UPDATE messages SET json = ? WHERE session_id = 'x' AND seq = 0`, string(other)); err != nil {
		t.Fatal(err)
	}
	appendTurn(t, s, "x", "2", sessiontest.Conversation("two", 2))
	got := load(t, s, "x")
	sameMessages(t, "held session", got.Messages, append(first.Messages, sessiontest.Conversation("two", 2)...))
	if fresh := load(t, open(t, path), "x"); fresh.Messages[0].Text() != "changed behind the store's back" {
		t.Fatalf("a fresh store read %q", fresh.Messages[0].Text())
	}
}

// A session deleted and made again, here with the same turn ids and as
// many messages, is read afresh by a store that held the one before.
func TestRecreatedSessionIsReadAfresh(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	a, b := open(t, path), open(t, path)
	appendTurn(t, a, "x", "1", sessiontest.Conversation("before", 4))
	load(t, a, "x")
	if err := b.Delete(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	appendTurn(t, b, "x", "1", sessiontest.Conversation("after", 4))
	sameMessages(t, "recreated by another store", load(t, a, "x").Messages, sessiontest.Conversation("after", 4))
	// The same through Create.
	if err := b.Delete(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	if got := load(t, a, "x"); len(got.Messages) != 0 {
		t.Fatalf("a recreated empty session has %d messages", len(got.Messages))
	}
	appendTurn(t, b, "x", "1", sessiontest.Conversation("third", 4))
	sameMessages(t, "recreated with Create", load(t, a, "x").Messages, sessiontest.Conversation("third", 4))
}

// A loaded session is the caller's: changing it does not change what the
// store holds decoded.
func TestCachedSessionIsIsolated(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	msgs := []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{
		llm.ToolUse{ID: "c", Name: "f", Input: json.RawMessage(`{"a":1}`)},
		llm.Image{Data: []byte{1, 2}, MediaType: "image/png"},
	}}}
	appendTurn(t, s, "x", "1", msgs)
	got := load(t, s, "x")
	got.Messages[0].Content[0].(llm.ToolUse).Input[2] = 'Z'
	got.Messages[0].Content[1].(llm.Image).Data[0] = 9
	got.Messages[0].Content[0] = llm.Text{Text: "replaced"}
	got.Messages[0] = llm.UserText("replaced")
	sameMessages(t, "after changing a loaded copy", load(t, s, "x").Messages, msgs)
}

// Loads and appends from two stores at once (run with -race).
func TestConcurrentLoadsAndAppends(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	stores := []*sqlite.Store{open(t, path), openWith(t, path, sqlite.WithCacheBytes(4<<10))}
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() {
			for n := range 15 {
				tag := fmt.Sprintf("s%d-%d", i, n)
				if err := s.Append(t.Context(), "shared", session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 2)}); err != nil {
					t.Error(err)
				}
			}
		})
		for range 2 {
			wg.Go(func() {
				for range 20 {
					sess, err := s.Load(t.Context(), "shared")
					if errors.Is(err, session.ErrNotFound) {
						continue // not made yet
					}
					if err != nil {
						t.Error(err)
						return
					}
					if len(sess.Messages) != 2*sess.Turns {
						t.Errorf("a load saw %d messages in %d turns", len(sess.Messages), sess.Turns)
					}
				}
			})
		}
	}
	wg.Wait()
	want := load(t, open(t, path), "shared").Messages
	if len(want) != 60 {
		t.Fatalf("%d messages stored, want 60", len(want))
	}
	for i, s := range stores {
		sameMessages(t, fmt.Sprint("store ", i), load(t, s, "shared").Messages, want)
	}
}

// A database of schema version 1 is migrated; its sessions (incarnation 0)
// load, and one another store deletes and makes again is read afresh.
func TestMigrationFromVersion1(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	db := rawDB(t, path)
	for _, stmt := range schemaV1 {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	oldSession(t, db, "old", false, time.Now(), sessiontest.Conversation("old", 4))
	db.Close()

	a, b := open(t, path), open(t, path)
	sameMessages(t, "after migrating", load(t, a, "old").Messages, sessiontest.Conversation("old", 4))
	if err := b.Delete(t.Context(), "old"); err != nil {
		t.Fatal(err)
	}
	appendTurn(t, b, "old", "1", sessiontest.Conversation("new", 4))
	sameMessages(t, "made again", load(t, a, "old").Messages, sessiontest.Conversation("new", 4))
}
