package filestore_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "agcore-sessions")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := filestore.Open(dir) // one .jsonl log per session in dir
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	ctx := context.Background()
	id := session.NewID()
	err = store.Append(ctx, id, session.Turn{
		ID:       "run-1", // a retried append of run-1 is a no-op
		Messages: []llm.Message{llm.UserText("Hi"), llm.AssistantText("Hello!")},
		Usage:    llm.Usage{InputTokens: 12, OutputTokens: 3},
	})
	if err != nil {
		log.Fatal(err)
	}
	sess, err := store.Load(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d messages in %d turn, %d tokens\n", len(sess.Messages), sess.Turns, sess.Usage.Total())
	// Output: 2 messages in 1 turn, 15 tokens
}
