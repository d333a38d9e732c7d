package memstore_test

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
)

func ExampleNew() {
	ctx := context.Background()
	var store session.Store = memstore.New()

	err := store.Append(ctx, "demo", session.Turn{
		ID:       "run-1",
		Messages: []llm.Message{llm.UserText("Hi"), llm.AssistantText("Hello!")},
	})
	if err != nil {
		panic(err)
	}
	sess, err := store.Load(ctx, "demo")
	if err != nil {
		panic(err)
	}
	for _, m := range sess.Messages {
		fmt.Printf("%s: %s\n", m.Role, m.Text())
	}
	// Output:
	// user: Hi
	// assistant: Hello!
}
