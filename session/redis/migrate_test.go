package redis_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/redis"
	"github.com/agcore/agcore/session/sessiontest"
)

// oldSession writes session id in the key layout of version 1 (the
// releases before issue 22; unchanged up to commit 899c59a), as its
// Append's script did.
func oldSession(t *testing.T, c *goredis.Client, prefix, id string, at time.Time, turns ...[]llm.Message) {
	t.Helper()
	ctx := context.Background()
	n, total := len(turns), 0
	for i, msgs := range turns {
		for _, m := range msgs {
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			c.RPush(ctx, prefix+"m:"+id, string(data))
		}
		c.HSet(ctx, prefix+"t:"+id, fmt.Sprintf("run-%d", i), i)
		total += len(msgs)
	}
	updated := at.Add(time.Duration(n-1) * time.Second).UnixNano()
	if err := c.HSet(ctx, prefix+"s:"+id, "inc", "k3j2", "created", at.UnixNano(), "updated", updated, "turns", n,
		"messages", total, "usage", fmt.Sprintf(`{"input_tokens":%d,"output_tokens":%d}`, 100*n, 10*n),
		"cost", fmt.Sprint(0.01*float64(n)), "prefix", `{"requests":1,"prefix_stable":0,"last_divergence":-1,"hash_version":2}`,
		"hashes", string([]byte{1, 0, 0, 0, 0, 0, 0, 0})).Err(); err != nil {
		t.Fatal(err)
	}
	c.HSet(ctx, prefix+"st:"+id, "agcore", `{"model":"old-model"}`)
	c.HSet(ctx, prefix+"index", id, fmt.Sprintf("%d %d %d %d", updated, at.UnixNano(), n, total))
}

// Keys the previous version wrote are migrated on Open: the sessions list
// with titles derived from their first prompt, usage and cost, load, and
// continue as the single-user owner's.
func TestPreviousVersionKeys(t *testing.T) {
	p := newPrefix(t)
	c := client(t)
	if err := c.Set(t.Context(), p+"version", 1, 0).Err(); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 5, 14, 30, 0, 0, time.UTC)
	oldSession(t, c, p, "first", base,
		[]llm.Message{llm.SystemText("be brief"), llm.UserText("\n  Plan a trip  to Lyon\nin May"), llm.AssistantText("Sure.")},
		sessiontest.Conversation("more", 4))
	oldSession(t, c, p, "second", base.Add(time.Hour), sessiontest.Conversation("q", 4))

	s := open(t, p)
	if v, err := c.Get(t.Context(), p+"version").Int(); err != nil || v != redis.LayoutVersion {
		t.Fatalf("layout version %d, %v; want %d", v, err, redis.LayoutVersion)
	}
	// An entry a process of the previous version writes after the
	// migration is still listed.
	c.HSet(t.Context(), p+"index", "late", fmt.Sprintf("%d %d 1 1", base.UnixNano(), base.UnixNano()))
	page, err := s.List(t.Context(), session.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Sessions) != 3 {
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
	page, err = s.List(t.Context(), session.ListOptions{Limit: 1})
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].ID != "first" || page.Sessions[0].Model != "new-model" || page.Sessions[0].Turns != 3 {
		t.Fatalf("List after continuing: %+v, %v", page.Sessions, err)
	}
	open(t, p) // a second open finds nothing to migrate
}
