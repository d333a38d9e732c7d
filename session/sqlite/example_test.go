package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sqlite"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "agcore-sessions")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "sessions.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	for i, text := range []string{"Hi", "How are you?"} {
		err := store.Append(ctx, "demo", session.Turn{
			ID:       fmt.Sprintf("run-%d", i+1),
			Messages: []llm.Message{llm.UserText(text), llm.AssistantText("...")},
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	page, err := store.List(ctx, session.ListOptions{Limit: 10})
	if err != nil {
		log.Fatal(err)
	}
	for _, info := range page.Sessions {
		fmt.Printf("%s: %d messages in %d turns\n", info.ID, info.Messages, info.Turns)
	}
	// Output: demo: 4 messages in 2 turns
}
