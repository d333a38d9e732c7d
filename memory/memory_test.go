package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func texts(msgs []llm.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Role) + ":" + m.Text()
	}
	return out
}

func TestMapStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var s memory.MapStore // the zero value works
	if _, err := s.Get(ctx, "x"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Get missing = %v", err)
	}
	v := []byte("one")
	for _, k := range []string{"conv:b:2", "conv:a:1", "conv:b:1", "other"} {
		if err := s.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	v[0] = 'X' // the store kept its own copy
	items, _ := s.List(ctx, "conv:b:")
	if len(items) != 2 || items[0].Key != "conv:b:1" || items[1].Key != "conv:b:2" || string(items[0].Value) != "one" {
		t.Errorf("List = %+v, want the prefix's keys in order with copied values", items)
	}
	_ = s.Delete(ctx, "conv:b:1")
	if err := s.Delete(ctx, "never"); err != nil {
		t.Errorf("deleting a missing key: %v", err)
	}
	if items, _ := s.List(ctx, "conv:"); len(items) != 2 {
		t.Errorf("after delete: %+v", items)
	}
}

func TestConversationRoundTripsEveryMessageInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &memory.MapStore{}
	c, err := memory.Open(ctx, store, "s1", memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llm.Message{
		llm.UserText("weather?"),
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.Thinking{Text: "look it up", Signature: "sig=="}, llm.ToolUse{ID: "c1", Name: "weather", Input: json.RawMessage(`{"city":"Oslo"}`)}}},
		llm.ToolResultText("c1", "rain", true),
		llm.AssistantText("It rains."),
	}
	for i := range 12 { // past 10, where unpadded keys would sort wrongly
		if err := c.Add(ctx, msgs[i%len(msgs)]); err != nil {
			t.Fatal(err)
		}
	}
	items, _ := store.List(ctx, "conv:s1:")
	if items[0].Key != "conv:s1:000000000000" {
		t.Errorf("first key %q", items[0].Key)
	}
	again, err := memory.Open(ctx, store, "s1", memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	got := again.Messages()
	if len(got) != 12 {
		t.Fatalf("%d messages reloaded", len(got))
	}
	for i, m := range got {
		if !reflect.DeepEqual(m, msgs[i%len(msgs)]) {
			t.Errorf("message %d reloaded as %+v, want %+v", i, m, msgs[i%len(msgs)])
		}
	}
	if err := again.Add(ctx, llm.UserText("next")); err != nil {
		t.Fatal(err)
	}
	if items, _ := store.List(ctx, "conv:s1:"); items[12].Key != "conv:s1:000000000012" {
		t.Errorf("a reopened conversation appends at %q", items[12].Key)
	}
	if err := again.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if items, _ := store.List(ctx, "conv:s1:"); len(items) != 0 || len(again.Messages()) != 0 {
		t.Errorf("after Clear: %d stored", len(items))
	}
	if _, err := memory.Open(ctx, store, "a:b", memory.Config{}); err == nil {
		t.Error("a session id with ':' could read another session's keys")
	}
}

func TestRecentWindowStartsAtAUserMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := memory.Open(ctx, &memory.MapStore{}, "s", memory.Config{MaxMessages: 3})
	_ = c.Add(ctx,
		llm.UserText("q1"), llm.AssistantText("a1"),
		llm.UserText("q2"),
		llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse{ID: "c", Name: "t"}}},
		llm.ToolResultText("c", "r", false),
		llm.AssistantText("a2"),
	)
	// The last 3 start at the tool result: the window moves on to a user
	// message, and here there is none left, so nothing orphaned is sent.
	if got := c.Recent(ctx); len(got) != 0 {
		t.Errorf("Recent = %q", texts(got))
	}
	_ = c.Add(ctx, llm.UserText("q3"), llm.AssistantText("a3"))
	if got := texts(c.Recent(ctx)); !reflect.DeepEqual(got, []string{"user:q3", "assistant:a3"}) {
		t.Errorf("Recent = %q", got)
	}
	all, _ := memory.Open(ctx, &memory.MapStore{}, "t", memory.Config{})
	_ = all.Add(ctx, llm.AssistantText("x"))
	if len(all.Recent(ctx)) != 1 {
		t.Error("without MaxMessages, Recent must return everything")
	}
}

func TestProviderRemembersSuccessfulRunsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &memory.MapStore{}
	m := llmtest.New(
		llmtest.Text("Nice to meet you, Ada."),
		llmtest.Fail(&llm.Error{Kind: llm.KindServer}),
		llmtest.Text("You are Ada."),
		llmtest.Text("Who?"),
	).Verify(t)
	a, err := agent.New(m, agent.Config{Instructions: "Be brief.", Providers: []agent.ContextProvider{&memory.Provider{Store: store}},
		Retry: middleware.RetryConfig{MaxAttempts: 1}}) // the failure must reach the run
	if err != nil {
		t.Fatal(err)
	}

	run := func(text, session string) error {
		_, err := a.Run(ctx, []llm.Message{llm.UserText(text)}, &agent.RunOptions{SessionID: session})
		return err
	}
	if err := run("I am Ada.", "s1"); err != nil {
		t.Fatal(err)
	}
	if err := run("This one fails.", "s1"); err == nil {
		t.Fatal("no error")
	}
	if err := run("Who am I?", "s1"); err != nil {
		t.Fatal(err)
	}
	if err := run("Who am I?", "s2"); err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	want := []string{"system:Be brief.", "user:I am Ada.", "assistant:Nice to meet you, Ada.", "user:Who am I?"}
	if got := texts(reqs[2].Messages); !reflect.DeepEqual(got, want) {
		t.Errorf("third request\n got %q\nwant %q (the failed run is not remembered)", got, want)
	}
	if got := texts(reqs[3].Messages); !reflect.DeepEqual(got, []string{"system:Be brief.", "user:Who am I?"}) {
		t.Errorf("another session's request %q: sessions must not share memory", got)
	}
	c, _ := memory.Open(ctx, store, "s1", memory.Config{})
	if len(c.Messages()) != 4 {
		t.Errorf("s1 holds %q", texts(c.Messages()))
	}
}

type cityIn struct {
	City string `json:"city"`
}

func TestProviderKeepsTheWholeToolTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &memory.MapStore{}
	weather := tool.MustFunc("weather", "Weather", func(_ context.Context, in cityIn) (string, error) { return "sunny", nil })
	m := llmtest.New(llmtest.Reply(llmtest.Call("c1", "weather", `{"city":"Rome"}`)), llmtest.Text("Sunny.")).Verify(t)
	a, err := agent.New(m, agent.Config{
		Tools:     []tool.Tool{weather},
		Providers: []agent.ContextProvider{&memory.Provider{Store: store}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(ctx, []llm.Message{llm.UserText("Rome?")}, &agent.RunOptions{SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	c, _ := memory.Open(ctx, store, "s", memory.Config{})
	got := c.Messages()
	if len(got) != 4 || got[1].ToolUses()[0].ID != "c1" || got[2].ToolCallID != "c1" || got[3].Text() != "Sunny." {
		t.Errorf("stored %+v, want user, call, result, answer", got)
	}
}
