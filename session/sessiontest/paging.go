package sessiontest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

// listAll pages through the whole store with the given page size, checking
// the page invariants on the way.
func listAll(t *testing.T, s session.Store, limit int) []session.Info {
	t.Helper()
	var all []session.Info
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("List never ends")
		}
		page, err := s.List(t.Context(), session.ListOptions{Limit: limit, Cursor: cursor})
		if err != nil {
			t.Fatalf("List(limit %d, cursor %q): %v", limit, cursor, err)
		}
		if limit > 0 && len(page.Sessions) > limit {
			t.Fatalf("List returned %d sessions, more than the limit %d", len(page.Sessions), limit)
		}
		all = append(all, page.Sessions...)
		if page.Next == "" {
			return all
		}
		if len(page.Sessions) == 0 {
			t.Fatal("List returned an empty page with a next cursor")
		}
		cursor = page.Next
	}
}

// newestFirst is the order List returns: UpdatedAt descending, then ID
// descending.
func newestFirst(a, b session.Info) int {
	if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

func testPaging(t *testing.T, s session.Store) {
	const n = 23
	var want []session.Info
	for i := range n {
		id := fmt.Sprintf("s%02d", i)
		sec := i % 5 // five distinct times, so ties are broken by ID
		msgs := Conversation(id, 1+i%3)
		mustAppend(t, s, id, session.Turn{ID: "t", Time: at(sec), Messages: msgs})
		want = append(want, session.Info{ID: id, Messages: len(msgs), Turns: 1, CreatedAt: at(sec), UpdatedAt: at(sec)})
	}
	// A second turn moves s00 to the top.
	mustAppend(t, s, "s00", turn("t2", 50, llm.UserText("again")))
	want[0].Messages++
	want[0].Turns++
	want[0].UpdatedAt = at(50)
	slices.SortFunc(want, newestFirst)

	for _, limit := range []int{1, 5, 7, 23, 24, 100, 0} {
		got := listAll(t, s, limit)
		if len(got) != n {
			t.Fatalf("limit %d: paged through %d sessions, want %d (duplicates or skips)", limit, len(got), n)
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.ID != w.ID || g.Messages != w.Messages || g.Turns != w.Turns ||
				!g.CreatedAt.Equal(w.CreatedAt) || !g.UpdatedAt.Equal(w.UpdatedAt) {
				t.Fatalf("limit %d: item %d = %+v, want %+v", limit, i, g, w)
			}
		}
	}
	// Next is empty exactly when nothing follows, even when the last page is full.
	page, err := s.List(t.Context(), session.ListOptions{Limit: n})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Sessions) != n || page.Next != "" {
		t.Errorf("List(limit %d) = %d sessions, next %q; want all and no cursor", n, len(page.Sessions), page.Next)
	}
}

func testPagingDeletes(t *testing.T, s session.Store) {
	for i := range 12 {
		mustAppend(t, s, fmt.Sprintf("p%02d", i), turn("t", i, llm.UserText("x")))
	}
	page, err := s.List(t.Context(), session.ListOptions{Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, info := range page.Sessions {
		seen[info.ID] = true
	}
	// Delete the cursor's own session and one on the next page.
	for _, id := range []string{page.Sessions[3].ID, "p06"} {
		if err := s.Delete(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	cursor := page.Next
	for cursor != "" {
		page, err = s.List(t.Context(), session.ListOptions{Limit: 4, Cursor: cursor})
		if err != nil {
			t.Fatalf("List after deletes: %v", err)
		}
		for _, info := range page.Sessions {
			if seen[info.ID] {
				t.Fatalf("%s listed twice", info.ID)
			}
			if info.ID == "p06" {
				t.Fatalf("deleted session p06 listed")
			}
			seen[info.ID] = true
		}
		cursor = page.Next
	}
	if len(seen) != 11 {
		t.Errorf("saw %d sessions, want 11 (12 minus the one deleted ahead of the cursor)", len(seen))
	}
}

func testBadCursor(t *testing.T, s session.Store) {
	mustAppend(t, s, "x", turn("t", 0, llm.UserText("x")))
	for _, cursor := range []string{"garbage", "!!!", strings.Repeat("A", 500)} {
		if _, err := s.List(t.Context(), session.ListOptions{Cursor: cursor}); err == nil {
			t.Errorf("List(cursor %q) succeeded, want an error", cursor)
		}
	}
}

func testDelete(t *testing.T, s session.Store) {
	mustAppend(t, s, "doomed", session.Turn{ID: "t1", Time: at(1), Messages: Conversation("d", 4),
		State: map[string]json.RawMessage{"k": json.RawMessage(`true`)}, Hashes: []uint64{1, 2}})
	if err := s.Delete(t.Context(), "doomed"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Load(t.Context(), "doomed"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Load after Delete: err = %v, want ErrNotFound", err)
	}
	if err := s.Delete(t.Context(), "doomed"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("second Delete: err = %v, want ErrNotFound", err)
	}
	if all := listAll(t, s, 10); len(all) != 0 {
		t.Errorf("List after Delete = %+v", all)
	}
	// A new session with the same id starts empty and has forgotten the old
	// turn ids.
	if _, err := s.Create(t.Context(), "doomed"); err != nil {
		t.Fatalf("Create after Delete: %v", err)
	}
	got := mustLoad(t, s, "doomed")
	if len(got.Messages) != 0 || len(got.State) != 0 || got.Hashes != nil || got.Turns != 0 {
		t.Errorf("recreated session kept old data: %+v", got)
	}
	mustAppend(t, s, "doomed", turn("t1", 2, llm.UserText("new life")))
	if got := mustLoad(t, s, "doomed"); len(got.Messages) != 1 {
		t.Errorf("old turn id still deduplicated after Delete: %d messages, want 1", len(got.Messages))
	}
}
