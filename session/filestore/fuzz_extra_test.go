package filestore_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
)

// FuzzSessionLog feeds arbitrary bytes as a session's log file: Load never
// panics, and either reports an error or returns a session that takes a new
// turn and keeps what it held (a torn tail is cut, never mistaken for data).
func FuzzSessionLog(f *testing.F) {
	seedDir := f.TempDir()
	quiet := filestore.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	st, err := filestore.Open(seedDir, quiet)
	if err != nil {
		f.Fatal(err)
	}
	for i, id := range []string{"t1", "t2"} {
		turn := session.Turn{ID: id, Messages: []llm.Message{llm.UserText("hi"), llm.AssistantText("hello")},
			Usage: llm.Usage{InputTokens: i + 1}, Hashes: []uint64{1, uint64(i)}}
		if err := st.Append(context.Background(), "s", turn); err != nil {
			f.Fatal(err)
		}
	}
	st.Close()
	good, err := os.ReadFile(filepath.Join(seedDir, "s.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-7])                                 // a torn last line
	f.Add(append(append([]byte{}, good...), "{\"turn\":"...)) // a torn append
	f.Add([]byte("{\"agcore_session\":1,\"id\":\"s\",\"created_at\":\"2026-01-05T14:30:12Z\"}\n"))
	f.Add([]byte("not a log\n"))

	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, "s.meta.json"))
		s, err := filestore.Open(dir, quiet)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx := context.Background()
		before, err := s.Load(ctx, "s")
		if err != nil {
			if !errors.Is(err, filestore.ErrCorrupt) && !errors.Is(err, session.ErrNotFound) {
				t.Fatalf("Load: %v, want ErrCorrupt", err)
			}
			return
		}
		if _, err := s.List(ctx, session.ListOptions{}); err != nil {
			t.Fatalf("List of a loadable session: %v", err)
		}
		turn := session.Turn{ID: "fuzz-new-turn", Messages: []llm.Message{llm.UserText("again"), llm.AssistantText("ok")}}
		if err := s.Append(ctx, "s", turn); err != nil {
			t.Fatalf("Append to a loadable session: %v", err)
		}
		after, err := s.Load(ctx, "s")
		if err != nil {
			t.Fatalf("Load after Append: %v", err)
		}
		added := 2
		if before.Turns == after.Turns { // the fuzzed log already held that turn id
			added = 0
		}
		if len(after.Messages) != len(before.Messages)+added {
			t.Fatalf("%d messages before, %d after one more turn", len(before.Messages), len(after.Messages))
		}
		if err := compact.Validate(after.Messages[len(before.Messages):]); err != nil {
			t.Fatalf("the new turn does not validate: %v", err)
		}
	})
}
