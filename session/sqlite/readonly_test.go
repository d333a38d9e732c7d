package sqlite_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sqlite"
)

func TestReadOnlyReadsAndNeverWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	if _, err := sqlite.Open(ctx, path, sqlite.ReadOnly()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v, want fs.ErrNotExist (and no file made)", err)
	}
	w, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(ctx, "a", session.Turn{ID: "t1", Messages: []llm.Message{llm.UserText("hi")}}); err != nil {
		t.Fatal(err)
	}
	w.Close()

	r, err := sqlite.Open(ctx, path, sqlite.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := r.Load(ctx, "a")
	if err != nil || len(s.Messages) != 1 {
		t.Fatalf("Load: %v, %v", s, err)
	}
	if page, err := r.List(ctx, session.ListOptions{}); err != nil || len(page.Sessions) != 1 {
		t.Errorf("List: %v, %v", page, err)
	}
	if err := r.Append(ctx, "a", session.Turn{ID: "t2", Messages: []llm.Message{llm.UserText("more")}}); err == nil {
		t.Error("a read-only store accepted a write")
	}
}
