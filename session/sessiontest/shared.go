package sessiontest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

// Shared checks two stores over the same data, as two processes see it,
// when each builds its appends on what it last saw of a session (a store
// may remember a session's totals between calls to spare a read): turns
// appended by both, interleaved, are all kept, in order, with the totals
// (turns, messages, usage, cost, model, state) summed over both; a
// session the other store deleted and made again as another owner's
// refuses the append (session.ErrOwner) and stores nothing; a session the
// other store deleted is made again by the append; a compaction is checked
// against the messages as stored, not as last seen; a turn the other
// store appended is not stored twice. a and b must share their data and
// hold none of the sessions "shared", "owned", "gone", "compact", "dup".
func Shared(t *testing.T, a, b session.Store) {
	t.Helper()
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	load := func(s session.Store, id string) *session.Session {
		t.Helper()
		sess, err := s.Load(ctx, id)
		must(err)
		return sess
	}

	// Interleaved appends; a loads in the middle, b never does.
	var usage llm.Usage
	var cost float64
	var msgs []llm.Message
	order := []session.Store{a, a, b, a, b, b, a, b}
	for i, s := range order {
		tag := fmt.Sprintf("t%d", i)
		tr := session.Turn{ID: tag, Owner: "alice", Messages: Conversation(tag, 2), CostUSD: 0.25 * float64(i+1),
			Usage: llm.Usage{InputTokens: 100 * (i + 1), OutputTokens: i + 1, CachedInputTokens: i % 3, ReasoningTokens: i % 2}}
		if i == 3 {
			tr.Model = "model-b"
		}
		if i == 5 {
			tr.State = map[string]json.RawMessage{"k": json.RawMessage(`{"v":5}`)}
		}
		must(s.Append(ctx, "shared", tr))
		usage.Add(tr.Usage)
		cost += tr.CostUSD
		msgs = append(msgs, tr.Messages...)
		if i == 2 {
			load(a, "shared")
		}
	}
	for name, s := range map[string]session.Store{"a": a, "b": b} {
		got := load(s, "shared")
		if got.Turns != len(order) || len(got.Messages) != len(msgs) || got.Usage != usage || got.CostUSD != cost ||
			got.Model != "model-b" || got.Owner != "alice" || string(got.State["k"]) != `{"v":5}` {
			t.Fatalf("store %s loads %d turns, %d messages, usage %+v, cost %v, model %q, owner %q, state %s; want %d, %d, %+v, %v, model-b, alice, {\"v\":5}",
				name, got.Turns, len(got.Messages), got.Usage, got.CostUSD, got.Model, got.Owner, got.State["k"],
				len(order), len(msgs), usage, cost)
		}
		for i := range msgs {
			if got.Messages[i].Text() != msgs[i].Text() {
				t.Fatalf("store %s: message %d is %q, want %q", name, i, got.Messages[i].Text(), msgs[i].Text())
			}
		}
	}

	// Deleted and made again as another owner's.
	must(a.Append(ctx, "owned", session.Turn{ID: "1", Owner: "alice", Messages: Conversation("1", 2)}))
	must(b.Delete(ctx, "owned"))
	must(b.Append(ctx, "owned", session.Turn{ID: "1", Owner: "bob", Messages: Conversation("bob", 2)}))
	if err := a.Append(ctx, "owned", session.Turn{ID: "2", Owner: "alice", Messages: Conversation("2", 2)}); !errors.Is(err, session.ErrOwner) {
		t.Fatalf("alice's append to the session bob made again: err = %v, want ErrOwner", err)
	}
	if got := load(a, "owned"); got.Owner != "bob" || got.Turns != 1 {
		t.Fatalf("after the refused append: owner %q, %d turns; want bob, 1", got.Owner, got.Turns)
	}

	// Deleted: the append makes it again.
	must(a.Append(ctx, "gone", session.Turn{ID: "1", Messages: Conversation("1", 2)}))
	must(b.Delete(ctx, "gone"))
	must(a.Append(ctx, "gone", session.Turn{ID: "2", Messages: Conversation("2", 3)}))
	if got := load(b, "gone"); got.Turns != 1 || len(got.Messages) != 3 {
		t.Fatalf("append to a deleted session: %d turns, %d messages; want 1, 3", got.Turns, len(got.Messages))
	}

	// A compaction is checked against the messages stored.
	must(a.Append(ctx, "compact", session.Turn{ID: "1", Messages: Conversation("1", 2)}))
	must(b.Append(ctx, "compact", session.Turn{ID: "2", Messages: Conversation("2", 4)}))
	view := &session.Compaction{Upto: 6, Messages: []llm.Message{llm.UserText("summary")}}
	must(a.Append(ctx, "compact", session.Turn{ID: "3", Messages: Conversation("3", 1), Compaction: view}))
	past := &session.Compaction{Upto: 100, Messages: []llm.Message{llm.UserText("summary")}}
	if err := b.Append(ctx, "compact", session.Turn{ID: "4", Messages: Conversation("4", 1), Compaction: past}); err == nil || errors.Is(err, session.ErrOwner) {
		t.Fatalf("a compaction past the messages: err = %v, want a refusal", err)
	}
	if got := load(b, "compact"); got.Turns != 3 || len(got.Messages) != 7 {
		t.Fatalf("compacted session: %d turns, %d messages; want 3, 7", got.Turns, len(got.Messages))
	}
	if got, err := b.LoadView(ctx, "compact"); err != nil || got.Base != 6 || len(got.Messages) != 1 {
		t.Fatalf("LoadView: %v, base %d, %d messages; want 6, 1", err, got.Base, len(got.Messages))
	}

	// A turn the other store appended is not stored twice.
	must(a.Append(ctx, "dup", session.Turn{ID: "1", Messages: Conversation("1", 2)}))
	must(b.Append(ctx, "dup", session.Turn{ID: "2", Messages: Conversation("2", 2)}))
	must(b.Append(ctx, "dup", session.Turn{ID: "1", Messages: Conversation("1", 2)}))
	must(a.Append(ctx, "dup", session.Turn{ID: "2", Messages: Conversation("2", 2)}))
	if got := load(a, "dup"); got.Turns != 2 || len(got.Messages) != 4 {
		t.Fatalf("turns appended again: %d turns, %d messages; want 2, 4", got.Turns, len(got.Messages))
	}
}
