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

// The contract's cases for what a session keeps beside its messages: its
// owner, its metadata and its compaction view.

func ownedTurn(id, owner string, sec int, msgs ...llm.Message) session.Turn {
	tr := turn(id, sec, msgs...)
	tr.Owner = owner
	return tr
}

// sameSession fails t unless the session id holds exactly want messages
// and turns: what a refused append must leave.
func unchanged(t *testing.T, s session.Store, id string, want *session.Session) {
	t.Helper()
	got := mustLoad(t, s, id)
	equalMessages(t, "after a refused append", got.Messages, want.Messages)
	if got.Turns != want.Turns || got.Owner != want.Owner || got.Title != want.Title || got.Model != want.Model ||
		got.Usage != want.Usage || got.CostUSD != want.CostUSD || !got.UpdatedAt.Equal(want.UpdatedAt) ||
		!slices.Equal(got.Hashes, want.Hashes) || len(got.State) != len(want.State) {
		t.Fatalf("a refused append changed the session:\n got %+v\nwant %+v", got, want)
	}
	if (got.Compaction == nil) != (want.Compaction == nil) ||
		got.Compaction != nil && (got.Compaction.Upto != want.Compaction.Upto || len(got.Compaction.Messages) != len(want.Compaction.Messages)) {
		t.Fatalf("a refused append changed the compaction: %+v, want %+v", got.Compaction, want.Compaction)
	}
}

func testOwnerAppend(t *testing.T, s session.Store) {
	mustAppend(t, s, "mine", ownedTurn("t1", "alice", 1, llm.UserText("alice's")))
	got := mustLoad(t, s, "mine")
	if got.Owner != "alice" {
		t.Fatalf("Owner = %q, want alice (the creating append's)", got.Owner)
	}
	before := got
	// Right after the store has seen the session (its append and load): a
	// turn id the session holds does not let another owner through, even
	// before any refused append made the store forget what it saw.
	if err := s.Append(t.Context(), "mine", ownedTurn("t1", "bob", 9, llm.UserText("intruder"))); !errors.Is(err, session.ErrOwner) {
		t.Fatalf("Append as bob of alice's stored turn id, on a session the store has seen: err = %v, want ErrOwner", err)
	}
	for _, owner := range []string{"bob", "", "Alice", "alice "} {
		tr := ownedTurn("t-"+owner, owner, 9, llm.UserText("intruder"))
		tr.Usage, tr.CostUSD, tr.Model = llm.Usage{InputTokens: 5}, 1, "intruder-model"
		tr.State = map[string]json.RawMessage{"k": json.RawMessage(`1`)}
		tr.Hashes = []uint64{1}
		tr.Compaction = &session.Compaction{Upto: 1, Messages: []llm.Message{llm.UserText("x")}}
		if err := s.Append(t.Context(), "mine", tr); !errors.Is(err, session.ErrOwner) {
			t.Fatalf("Append as %q to alice's session: err = %v, want ErrOwner", owner, err)
		}
		// A turn id alice's session holds does not let another owner through.
		tr.ID = "t1"
		if err := s.Append(t.Context(), "mine", tr); !errors.Is(err, session.ErrOwner) {
			t.Fatalf("Append as %q of a stored turn id: err = %v, want ErrOwner", owner, err)
		}
	}
	unchanged(t, s, "mine", before)
	// The refused turn ids were not recorded: alice can use them.
	mustAppend(t, s, "mine", ownedTurn("t-bob", "alice", 10, llm.UserText("again")))
	if got := mustLoad(t, s, "mine"); got.Turns != 2 || got.Owner != "alice" {
		t.Fatalf("after alice's second turn: %d turns, owner %q", got.Turns, got.Owner)
	}

	// A session made by Create belongs to the single-user owner "".
	if _, err := s.Create(t.Context(), "made"); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(t.Context(), "made", ownedTurn("t1", "alice", 1, llm.UserText("x"))); !errors.Is(err, session.ErrOwner) {
		t.Fatalf("Append as alice to a created session: err = %v, want ErrOwner", err)
	}
	mustAppend(t, s, "made", turn("t1", 2, llm.UserText("single user")))
	if got := mustLoad(t, s, "made"); got.Owner != "" || got.Turns != 1 {
		t.Fatalf("created session: owner %q, %d turns", got.Owner, got.Turns)
	}
}

func testOwnerScoped(t *testing.T, s session.Store) {
	alice, bob := session.Scoped(s, "alice"), session.Scoped(s, "bob")
	mustAppend(t, alice, "a1", turn("t1", 1, llm.UserText("alice one")))
	mustAppend(t, bob, "b1", turn("t1", 2, llm.UserText("bob one")))
	mustAppend(t, s, "n1", turn("t1", 3, llm.UserText("nobody's")))
	if got := mustLoad(t, s, "a1"); got.Owner != "alice" {
		t.Fatalf("a session appended through Scoped(alice) has owner %q", got.Owner)
	}
	for _, tc := range []struct {
		st    session.Store
		who   string
		other string
	}{{alice, "alice", "b1"}, {bob, "bob", "a1"}, {alice, "alice", "n1"}} {
		if _, err := tc.st.Load(t.Context(), tc.other); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("%s Load(%s): err = %v, want ErrNotFound", tc.who, tc.other, err)
		}
		if _, err := tc.st.LoadView(t.Context(), tc.other); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("%s LoadView(%s): err = %v, want ErrNotFound", tc.who, tc.other, err)
		}
		if err := tc.st.Delete(t.Context(), tc.other); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("%s Delete(%s): err = %v, want ErrNotFound", tc.who, tc.other, err)
		}
		if err := tc.st.Append(t.Context(), tc.other, turn("t9", 9, llm.UserText("x"))); !errors.Is(err, session.ErrOwner) {
			t.Errorf("%s Append(%s): err = %v, want ErrOwner", tc.who, tc.other, err)
		}
	}
	for _, id := range []string{"a1", "b1", "n1"} {
		if got := mustLoad(t, s, id); got.Turns != 1 {
			t.Errorf("%s: %d turns after the other owners' attempts, want 1", id, got.Turns)
		}
	}
	ids := func(st session.Store, opts session.ListOptions) []string {
		t.Helper()
		page, err := st.List(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, i := range page.Sessions {
			out = append(out, i.ID)
		}
		return out
	}
	if got := ids(alice, session.ListOptions{AnyOwner: true}); !slices.Equal(got, []string{"a1"}) {
		t.Errorf("Scoped(alice).List (even asking for every owner) = %v, want [a1]", got)
	}
	if got := ids(bob, session.ListOptions{Owner: "alice"}); !slices.Equal(got, []string{"b1"}) {
		t.Errorf("Scoped(bob).List(Owner alice) = %v, want [b1]", got)
	}
	if got := ids(s, session.ListOptions{}); !slices.Equal(got, []string{"n1"}) {
		t.Errorf("List() = %v, want the single-user owner's [n1]", got)
	}
	if got := ids(s, session.ListOptions{AnyOwner: true}); !slices.Equal(got, []string{"n1", "b1", "a1"}) {
		t.Errorf("List(AnyOwner) = %v, want [n1 b1 a1]", got)
	}
	if got, err := alice.Load(t.Context(), "a1"); err != nil || got.Turns != 1 {
		t.Fatalf("alice Load(a1) = %v, %v", got, err)
	}
	if err := alice.Delete(t.Context(), "a1"); err != nil {
		t.Fatalf("alice Delete(a1): %v", err)
	}
	if _, err := s.Load(t.Context(), "a1"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Load after alice's Delete: %v", err)
	}
}

func testOwnerPaging(t *testing.T, s session.Store) {
	owners := []string{"", "alice", "bob"}
	want := map[string][]session.Info{}
	for i := range 17 {
		owner := owners[i%3]
		id := fmt.Sprintf("p%02d", i)
		mustAppend(t, s, id, ownedTurn("t", owner, i%4, llm.UserText(id)))
		want[owner] = append(want[owner], session.Info{ID: id, UpdatedAt: at(i % 4)})
	}
	for _, owner := range owners {
		slices.SortFunc(want[owner], newestFirst)
		for _, limit := range []int{1, 2, 5, 0} {
			var got []string
			cursor := ""
			for range 100 {
				page, err := s.List(t.Context(), session.ListOptions{Owner: owner, Limit: limit, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				if limit > 0 && len(page.Sessions) > limit {
					t.Fatalf("page of %d, limit %d", len(page.Sessions), limit)
				}
				for _, info := range page.Sessions {
					if info.Owner != owner {
						t.Fatalf("List(Owner %q) holds %s of owner %q", owner, info.ID, info.Owner)
					}
					got = append(got, info.ID)
				}
				if cursor = page.Next; cursor == "" {
					break
				}
			}
			var wantIDs []string
			for _, i := range want[owner] {
				wantIDs = append(wantIDs, i.ID)
			}
			if !slices.Equal(got, wantIDs) {
				t.Fatalf("List(Owner %q, limit %d) paged %v, want %v", owner, limit, got, wantIDs)
			}
		}
	}
	var all []string
	cursor := ""
	for range 100 {
		page, err := s.List(t.Context(), session.ListOptions{AnyOwner: true, Limit: 4, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range page.Sessions {
			all = append(all, info.ID)
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if len(all) != 17 {
		t.Fatalf("List(AnyOwner) paged %d sessions, want 17: %v", len(all), all)
	}
}

func testMetadata(t *testing.T, s session.Store) {
	first := strings.Repeat("word ", 30) // longer than a title
	turns := []session.Turn{
		{ID: "1", Time: at(1), Owner: "o", Model: "model-a",
			Messages: []llm.Message{llm.SystemText("system prompt"), llm.UserText("\n  \n  Plan   a trip\tto Lyon \nwith details"), llm.AssistantText("ok")},
			Usage:    llm.Usage{InputTokens: 100, OutputTokens: 10, CachedInputTokens: 40}, CostUSD: 0.5},
		{ID: "2", Time: at(2), Owner: "o", Messages: []llm.Message{llm.UserText("second"), llm.AssistantText("ok")},
			Usage: llm.Usage{InputTokens: 200, OutputTokens: 20}, CostUSD: 0.25}, // no model: kept
		{ID: "3", Time: at(3), Owner: "o", Model: "model-b", Messages: []llm.Message{llm.UserText("third")},
			Usage: llm.Usage{InputTokens: 1, OutputTokens: 2}},
	}
	for _, tr := range turns {
		mustAppend(t, s, "meta", tr)
	}
	mustAppend(t, s, "long", session.Turn{ID: "1", Time: at(4), Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{llm.Image{URL: "https://example.com/x.png"}}}, // no text
		llm.UserText(first + "\nsecond line"),
	}})
	mustAppend(t, s, "untitled", session.Turn{ID: "1", Time: at(5), Messages: []llm.Message{llm.AssistantText("no user")}})
	mustAppend(t, s, "untitled", session.Turn{ID: "2", Time: at(6), Messages: []llm.Message{llm.UserText("late title")}})

	wantLong := []rune(strings.TrimSpace(first))
	wantLongTitle := string(wantLong[:79]) + "…"
	want := map[string]session.Info{
		"meta": {ID: "meta", Owner: "o", Title: "Plan a trip to Lyon", Model: "model-b", Messages: 6, Turns: 3,
			Usage:   llm.Usage{InputTokens: 301, OutputTokens: 32, CachedInputTokens: 40},
			CostUSD: 0.75, CreatedAt: at(1), UpdatedAt: at(3)},
		"long":     {ID: "long", Title: wantLongTitle, Messages: 2, Turns: 1, CreatedAt: at(4), UpdatedAt: at(4)},
		"untitled": {ID: "untitled", Title: "late title", Messages: 2, Turns: 2, CreatedAt: at(5), UpdatedAt: at(6)},
	}
	page, err := s.List(t.Context(), session.ListOptions{AnyOwner: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Sessions) != len(want) {
		t.Fatalf("List = %+v", page.Sessions)
	}
	for _, got := range page.Sessions {
		w := want[got.ID]
		if got.Owner != w.Owner || got.Title != w.Title || got.Model != w.Model || got.Messages != w.Messages ||
			got.Turns != w.Turns || got.Usage != w.Usage || got.CostUSD != w.CostUSD ||
			!got.CreatedAt.Equal(w.CreatedAt) || !got.UpdatedAt.Equal(w.UpdatedAt) {
			t.Errorf("List: %s\n got %+v\nwant %+v", got.ID, got, w)
		}
	}
	sess := mustLoad(t, s, "meta")
	if sess.Owner != "o" || sess.Title != "Plan a trip to Lyon" || sess.Model != "model-b" || sess.Base != 0 {
		t.Errorf("Load: owner %q title %q model %q base %d", sess.Owner, sess.Title, sess.Model, sess.Base)
	}
}

// compacted appends to session id four turns of four messages and a
// fifth whose compaction view replaces the first upto messages; it
// returns every message stored and the view.
func compacted(t *testing.T, s session.Store, id string, upto int) ([]llm.Message, *session.Compaction) {
	t.Helper()
	var all []llm.Message
	for i := range 4 {
		tag := fmt.Sprintf("%s-%d", id, i)
		mustAppend(t, s, id, session.Turn{ID: tag, Time: at(i), Messages: Conversation(tag, 4)})
		all = append(all, Conversation(tag, 4)...)
	}
	view := &session.Compaction{Upto: upto, Messages: []llm.Message{
		llm.UserText("Summary of the conversation so far: weather questions."),
		llm.AssistantText("Understood."),
	}}
	tag := id + "-4"
	mustAppend(t, s, id, session.Turn{ID: tag, Time: at(4), Messages: Conversation(tag, 4), Compaction: view})
	all = append(all, Conversation(tag, 4)...)
	return all, &session.Compaction{Upto: upto, Messages: []llm.Message{
		llm.UserText("Summary of the conversation so far: weather questions."),
		llm.AssistantText("Understood."),
	}}
}

func sameCompaction(t *testing.T, what string, got, want *session.Compaction) {
	t.Helper()
	if got == nil || want == nil {
		if got != want {
			t.Fatalf("%s: compaction %+v, want %+v", what, got, want)
		}
		return
	}
	if got.Upto != want.Upto {
		t.Fatalf("%s: compaction upto %d, want %d", what, got.Upto, want.Upto)
	}
	equalMessages(t, what+": compaction messages", got.Messages, want.Messages)
}

func testLoadView(t *testing.T, s session.Store) {
	// Without a compaction LoadView is Load.
	mustAppend(t, s, "plain", session.Turn{ID: "1", Time: at(1), Messages: Conversation("plain", 6)})
	v, err := s.LoadView(t.Context(), "plain")
	if err != nil {
		t.Fatal(err)
	}
	if v.Base != 0 || v.Compaction != nil || v.Turns != 1 {
		t.Fatalf("LoadView without a compaction: base %d, compaction %v", v.Base, v.Compaction)
	}
	equalMessages(t, "LoadView without a compaction", v.Messages, Conversation("plain", 6))

	all, view := compacted(t, s, "cv", 14)
	for range 2 { // again: perhaps served from a cache
		v, err = s.LoadView(t.Context(), "cv")
		if err != nil {
			t.Fatal(err)
		}
		if v.Base != 14 || v.Turns != 5 || v.ID != "cv" {
			t.Fatalf("LoadView: base %d, turns %d, want 14, 5", v.Base, v.Turns)
		}
		sameCompaction(t, "LoadView", v.Compaction, view)
		equalMessages(t, "LoadView messages", v.Messages, all[14:])
		equalMessages(t, "LoadView View()", v.View(), slices.Concat(view.Messages, all[14:]))
		knownHashesAreRight(t, v)
		// The request-hash machinery works on the view's messages.
		req := slices.Concat([]llm.Message{llm.SystemText("sys")}, v.View())
		if err := v.TouchRequest(req); err != nil {
			t.Fatal(err)
		}
		if want, _ := session.PrefixHashes(req); !slices.Equal(v.Hashes, want) {
			t.Fatal("TouchRequest over a LoadView session's View() made other hashes than PrefixHashes")
		}
	}
	full := mustLoad(t, s, "cv")
	if full.Base != 0 {
		t.Fatalf("Load: base %d, want 0", full.Base)
	}
	equalMessages(t, "Load", full.Messages, all)
	sameCompaction(t, "Load", full.Compaction, view)
	equalMessages(t, "Load View()", full.View(), slices.Concat(view.Messages, all[14:]))

	// A turn without a compaction keeps the view; LoadView reads the new
	// messages too.
	mustAppend(t, s, "cv", session.Turn{ID: "next", Time: at(9), Messages: Conversation("next", 3)})
	all = append(all, Conversation("next", 3)...)
	v, err = s.LoadView(t.Context(), "cv")
	if err != nil {
		t.Fatal(err)
	}
	sameCompaction(t, "after a turn without one", v.Compaction, view)
	equalMessages(t, "LoadView after a turn", v.Messages, all[14:])

	// A compaction up to the very end leaves no message to read.
	end := &session.Compaction{Upto: len(all) + 2, Messages: []llm.Message{llm.UserText("all of it")}}
	mustAppend(t, s, "cv", session.Turn{ID: "end", Time: at(10), Messages: Conversation("end", 2), Compaction: end})
	v, err = s.LoadView(t.Context(), "cv")
	if err != nil {
		t.Fatal(err)
	}
	if v.Base != len(all)+2 || len(v.Messages) != 0 {
		t.Fatalf("compaction to the end: base %d, %d messages", v.Base, len(v.Messages))
	}
	sameCompaction(t, "to the end", v.Compaction, end)
	equalMessages(t, "to the end View()", v.View(), end.Messages)

	// A caller's changes to a loaded view do not reach the store.
	v.Compaction.Messages[0] = llm.UserText("changed")
	v.Compaction.Upto = 1
	again, err := s.LoadView(t.Context(), "cv")
	if err != nil {
		t.Fatal(err)
	}
	sameCompaction(t, "after the caller changed a loaded view", again.Compaction, end)
}

func testCompactionAtomic(t *testing.T, s session.Store) {
	all, view := compacted(t, s, "ca", 10)
	before := mustLoad(t, s, "ca")
	bad := []session.Turn{
		// Past the messages the session will hold.
		{ID: "past", Time: at(20), Messages: Conversation("past", 2),
			Compaction: &session.Compaction{Upto: len(all) + 3, Messages: []llm.Message{llm.UserText("x")}}},
		{ID: "negative", Time: at(20), Messages: Conversation("neg", 2),
			Compaction: &session.Compaction{Upto: -1, Messages: []llm.Message{llm.UserText("x")}}},
		// A compaction message that does not encode.
		{ID: "bad-message", Time: at(20), Messages: Conversation("bad", 2),
			Compaction: &session.Compaction{Upto: 2, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{nil}}}}},
	}
	for _, tr := range bad {
		tr.Usage, tr.CostUSD, tr.Model = llm.Usage{InputTokens: 7}, 1, "m"
		if err := s.Append(t.Context(), "ca", tr); err == nil {
			t.Fatalf("turn %q with a bad compaction was stored", tr.ID)
		}
	}
	unchanged(t, s, "ca", before)
	// A retried turn does not replace the view again.
	retry := session.Turn{ID: "ca-4", Time: at(30), Messages: Conversation("x", 1),
		Compaction: &session.Compaction{Upto: 1, Messages: []llm.Message{llm.UserText("other")}}}
	mustAppend(t, s, "ca", retry)
	unchanged(t, s, "ca", before)
	// A later compaction replaces the view, with its turn.
	next := &session.Compaction{Upto: len(all) + 1, Messages: []llm.Message{llm.UserText("newer summary")}}
	mustAppend(t, s, "ca", session.Turn{ID: "later", Time: at(31), Messages: Conversation("later", 2), Compaction: next})
	v, err := s.LoadView(t.Context(), "ca")
	if err != nil {
		t.Fatal(err)
	}
	sameCompaction(t, "replaced", v.Compaction, next)
	equalMessages(t, "replaced", v.Messages, Conversation("later", 2)[1:])
	if v.Turns != 6 || v.Base != len(all)+1 {
		t.Fatalf("after the replacing turn: %d turns, base %d", v.Turns, v.Base)
	}
	_ = view
}
