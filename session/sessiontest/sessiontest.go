package sessiontest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

// Run runs the Store contract as subtests of t. newStore must return a new,
// empty store for each call (each subtest gets its own) and should register
// with t.Cleanup whatever closing the store needs.
func Run(t *testing.T, newStore func(t *testing.T) session.Store) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, s session.Store)
	}{
		{"CreateThenLoad", testCreateThenLoad},
		{"CreateExisting", testCreateExisting},
		{"MissingSession", testMissing},
		{"InvalidIDs", testInvalidIDs},
		{"ValidEdgeIDs", testValidEdgeIDs},
		{"RoundTripEveryBlockKind", testRoundTrip},
		{"OrderAcrossTurns", testOrder},
		{"AppendCreatesSession", testAppendCreates},
		{"AtomicTurn", testAtomic},
		{"IdempotentAppend", testIdempotent},
		{"EmptyTurnID", testEmptyTurnID},
		{"Isolation", testIsolation},
		{"Paging", testPaging},
		{"PagingWithDeletes", testPagingDeletes},
		{"BadCursor", testBadCursor},
		{"Delete", testDelete},
		{"Totals", testTotals},
		{"Times", testTimes},
		{"DefensiveCopies", testCopies},
		{"CancelledContext", testCancelled},
		{"ConcurrentAppends", testConcurrent},
		{"ConcurrentDuplicateAppends", testConcurrentDuplicates},
		{"OwnerAppend", testOwnerAppend},
		{"OwnerScoped", testOwnerScoped},
		{"OwnerPaging", testOwnerPaging},
		{"Metadata", testMetadata},
		{"LoadView", testLoadView},
		{"CompactionAtomic", testCompactionAtomic},
		{"AnsweringAgents", testAnsweringAgents},
		{"Fork", testFork},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newStore(t))
		})
	}
}

// base is the time the suite's turns are stamped from; far enough in the
// past that a store's own clock (used by Create) is always later.
var base = time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)

func at(sec int) time.Time { return base.Add(time.Duration(sec) * time.Second) }

func turn(id string, sec int, msgs ...llm.Message) session.Turn {
	return session.Turn{ID: id, Time: at(sec), Messages: msgs}
}

func mustAppend(t *testing.T, s session.Store, id string, tr session.Turn) {
	t.Helper()
	if err := s.Append(t.Context(), id, tr); err != nil {
		t.Fatalf("Append(%q, turn %q): %v", id, tr.ID, err)
	}
}

func mustLoad(t *testing.T, s session.Store, id string) *session.Session {
	t.Helper()
	sess, err := s.Load(t.Context(), id)
	if err != nil {
		t.Fatalf("Load(%q): %v", id, err)
	}
	if sess.ID != id {
		t.Fatalf("Load(%q).ID = %q", id, sess.ID)
	}
	return sess
}

// equalMessages fails t unless got and want are deeply equal, showing both
// in their storage JSON when they are not.
func equalMessages(t *testing.T, what string, got, want []llm.Message) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if reflect.DeepEqual(got, want) {
		return
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d messages, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			g, _ := json.Marshal(got[i])
			w, _ := json.Marshal(want[i])
			t.Fatalf("%s: message %d differs\n got: %s\nwant: %s\n got (Go): %#v\nwant (Go): %#v",
				what, i, clip(g), clip(w), got[i], want[i])
		}
	}
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return string(b)
}

func testCreateThenLoad(t *testing.T, s session.Store) {
	before := time.Now()
	created, err := s.Create(t.Context(), "alpha")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	after := time.Now()
	if created.ID != "alpha" || len(created.Messages) != 0 || created.Turns != 0 {
		t.Fatalf("Create returned %+v, want an empty session named alpha", created)
	}
	if created.CreatedAt.Before(before.Add(-time.Second)) || created.CreatedAt.After(after.Add(time.Second)) {
		t.Errorf("CreatedAt = %v, want about now (%v)", created.CreatedAt, before)
	}
	if !created.UpdatedAt.Equal(created.CreatedAt) {
		t.Errorf("UpdatedAt = %v, want CreatedAt %v for a new session", created.UpdatedAt, created.CreatedAt)
	}
	loaded := mustLoad(t, s, "alpha")
	if len(loaded.Messages) != 0 || loaded.Turns != 0 || len(loaded.State) != 0 || loaded.Usage != (llm.Usage{}) || loaded.CostUSD != 0 {
		t.Errorf("Load of a new session = %+v, want it empty", loaded)
	}
	if !loaded.CreatedAt.Equal(created.CreatedAt) || !loaded.UpdatedAt.Equal(created.UpdatedAt) {
		t.Errorf("Load times = %v/%v, want Create's %v/%v", loaded.CreatedAt, loaded.UpdatedAt, created.CreatedAt, created.UpdatedAt)
	}
	if loaded.State == nil {
		t.Errorf("Load returned a nil State map; want an empty, writable one")
	}
}

func testCreateExisting(t *testing.T, s session.Store) {
	if _, err := s.Create(t.Context(), "dup"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(t.Context(), "dup"); !errors.Is(err, session.ErrExists) {
		t.Fatalf("second Create: err = %v, want ErrExists", err)
	}
	mustAppend(t, s, "by-append", turn("t1", 0, llm.UserText("hi")))
	if _, err := s.Create(t.Context(), "by-append"); !errors.Is(err, session.ErrExists) {
		t.Fatalf("Create of a session made by Append: err = %v, want ErrExists", err)
	}
	// The failed Create must not have reset the session.
	if got := mustLoad(t, s, "by-append"); len(got.Messages) != 1 {
		t.Fatalf("after a failed Create the session has %d messages, want 1", len(got.Messages))
	}
}

func testMissing(t *testing.T, s session.Store) {
	if _, err := s.Load(t.Context(), "nobody"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Load of a missing session: err = %v, want ErrNotFound", err)
	}
	if err := s.Delete(t.Context(), "nobody"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Delete of a missing session: err = %v, want ErrNotFound", err)
	}
	page, err := s.List(t.Context(), session.ListOptions{})
	if err != nil {
		t.Fatalf("List of an empty store: %v", err)
	}
	if len(page.Sessions) != 0 || page.Next != "" {
		t.Errorf("List of an empty store = %+v, want nothing", page)
	}
}

// unsafeIDs are ids no store may accept: each could escape a directory or
// break a file name.
var unsafeIDs = []struct{ name, id string }{
	{"empty", ""},
	{"dot", "."},
	{"dotdot", ".."},
	{"parent", "../x"},
	{"deep parent", "a/../../etc/passwd"},
	{"absolute", "/abs"},
	{"slash", "a/b"},
	{"backslash", `a\b`},
	{"windows drive", `C:\x`},
	{"NUL", "a\x00b"},
	{"newline", "a\nb"},
	{"space", "a b"},
	{"non-ASCII", "séance"},
	{"too long", strings.Repeat("a", session.MaxIDLen+1)},
}

func testInvalidIDs(t *testing.T, s session.Store) {
	ops := []struct {
		name string
		do   func(ctx context.Context, id string) error
	}{
		{"Create", func(ctx context.Context, id string) error { _, err := s.Create(ctx, id); return err }},
		{"Load", func(ctx context.Context, id string) error { _, err := s.Load(ctx, id); return err }},
		{"Append", func(ctx context.Context, id string) error {
			return s.Append(ctx, id, turn("t1", 0, llm.UserText("x")))
		}},
		{"Delete", func(ctx context.Context, id string) error { return s.Delete(ctx, id) }},
	}
	for _, tc := range unsafeIDs {
		for _, op := range ops {
			if err := op.do(t.Context(), tc.id); !errors.Is(err, session.ErrInvalidID) {
				t.Errorf("%s(%s %q): err = %v, want ErrInvalidID", op.name, tc.name, tc.id, err)
			}
		}
	}
	page, err := s.List(t.Context(), session.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Sessions) != 0 {
		t.Errorf("rejected ids left sessions behind: %+v", page.Sessions)
	}
}

func testValidEdgeIDs(t *testing.T, s session.Store) {
	ids := []string{
		"a", ".a", "a.", "a..b", "...", "-", "_", "A-b_c.9",
		strings.Repeat("z", session.MaxIDLen),
		session.NewID(),
	}
	for i, id := range ids {
		if err := session.ValidateID(id); err != nil {
			t.Fatalf("ValidateID(%q): %v", id, err)
		}
		mustAppend(t, s, id, turn("t", i, llm.UserText(id)))
	}
	for _, id := range ids {
		got := mustLoad(t, s, id)
		if len(got.Messages) != 1 || got.Messages[0].Text() != id {
			t.Errorf("Load(%q) = %+v, want its one message", id, got.Messages)
		}
	}
	all := listAll(t, s, 3)
	if len(all) != len(ids) {
		t.Errorf("List found %d sessions, want %d", len(all), len(ids))
	}
}

func testRoundTrip(t *testing.T, s session.Store) {
	want := EveryBlockKind()
	mustAppend(t, s, "blocks", session.Turn{ID: "t1", Time: at(0), Messages: EveryBlockKind()})
	got := mustLoad(t, s, "blocks")
	equalMessages(t, "round trip", got.Messages, want)
	knownHashesAreRight(t, got)
	// A second load (possibly served differently, e.g. from a cache) is the same.
	again := mustLoad(t, s, "blocks")
	equalMessages(t, "second load", again.Messages, want)
	knownHashesAreRight(t, again)
}

// knownHashesAreRight fails t if sess knows a content hash for one of its
// messages (a store need not give any) that is not the message's.
func knownHashesAreRight(t *testing.T, sess *session.Session) {
	t.Helper()
	for i, m := range sess.Messages {
		h, ok := sess.KnownMessageHash(i)
		if !ok {
			continue
		}
		if want, err := session.MessageHash(m); err != nil || h != want {
			t.Errorf("message %d: Load gave the content hash %x, want %x (%v)", i, h, want, err)
		}
	}
}

func testOrder(t *testing.T, s session.Store) {
	var want []llm.Message
	for i := range 7 {
		msgs := Conversation(fmt.Sprintf("turn%d", i), 1+i%4*3) // 1, 4, 7, 10, 1, ...
		mustAppend(t, s, "ordered", session.Turn{ID: fmt.Sprintf("t%d", i), Time: at(i), Messages: msgs})
		want = append(want, Conversation(fmt.Sprintf("turn%d", i), 1+i%4*3)...)
		// An interleaved append to another session must not disturb the order.
		mustAppend(t, s, "other", turn(fmt.Sprintf("o%d", i), i, llm.UserText("noise")))
	}
	got := mustLoad(t, s, "ordered")
	equalMessages(t, "order", got.Messages, want)
	knownHashesAreRight(t, got)
	if got.Turns != 7 {
		t.Errorf("Turns = %d, want 7", got.Turns)
	}
}

func testAppendCreates(t *testing.T, s session.Store) {
	mustAppend(t, s, "fresh", turn("t1", 5, llm.UserText("hello")))
	got := mustLoad(t, s, "fresh")
	if len(got.Messages) != 1 || got.Turns != 1 {
		t.Fatalf("session made by Append = %+v", got)
	}
	if !got.CreatedAt.Equal(at(5)) || !got.UpdatedAt.Equal(at(5)) {
		t.Errorf("CreatedAt/UpdatedAt = %v/%v, want the turn's time %v", got.CreatedAt, got.UpdatedAt, at(5))
	}
}

func testAtomic(t *testing.T, s session.Store) {
	bad := []struct {
		name string
		turn session.Turn
	}{
		{"tool_use input not JSON", session.Turn{Messages: []llm.Message{
			llm.UserText("fine"),
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse{ID: "c", Name: "f", Input: json.RawMessage(`{"open":`)}}},
		}}},
		{"message without role", session.Turn{Messages: []llm.Message{llm.UserText("fine"), {Content: []llm.Block{llm.Text{Text: "x"}}}}}},
		{"nil block", session.Turn{Messages: []llm.Message{llm.UserText("fine"), {Role: llm.RoleUser, Content: []llm.Block{nil}}}}},
		{"extension data not JSON", session.Turn{Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{llm.Extension{Kind: "k", Data: json.RawMessage("nope")}}},
		}}},
		{"state value not JSON", session.Turn{
			Messages: []llm.Message{llm.UserText("fine")},
			State:    map[string]json.RawMessage{"k": json.RawMessage("{bad")},
		}},
	}
	mustAppend(t, s, "existing", turn("t0", 0, llm.UserText("before")))
	wantExisting := mustLoad(t, s, "existing")
	for i, tc := range bad {
		tc.turn.ID = fmt.Sprintf("bad%d", i)
		tc.turn.Time = at(100 + i)
		tc.turn.Usage = llm.Usage{InputTokens: 1000}
		tc.turn.CostUSD = 1
		if err := s.Append(t.Context(), "existing", tc.turn); err == nil {
			t.Errorf("%s: Append succeeded, want an encoding error", tc.name)
		}
		if err := s.Append(t.Context(), "missing", tc.turn); err == nil {
			t.Errorf("%s: Append to a new session succeeded, want an encoding error", tc.name)
		}
	}
	got := mustLoad(t, s, "existing")
	equalMessages(t, "after failed appends", got.Messages, wantExisting.Messages)
	if got.Turns != 1 || got.Usage != wantExisting.Usage || got.CostUSD != 0 || len(got.State) != 0 ||
		!got.UpdatedAt.Equal(wantExisting.UpdatedAt) {
		t.Errorf("failed appends changed the session: %+v", got)
	}
	if _, err := s.Load(t.Context(), "missing"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a failed Append created its session: Load err = %v, want ErrNotFound", err)
	}
	// The failed turn ids were not recorded: the same id can still land.
	mustAppend(t, s, "existing", turn("bad0", 200, llm.UserText("after")))
	if got := mustLoad(t, s, "existing"); len(got.Messages) != 2 {
		t.Errorf("a good turn reusing a failed turn's id: %d messages, want 2", len(got.Messages))
	}
}

func testIdempotent(t *testing.T, s session.Store) {
	first := session.Turn{ID: "run-1", Time: at(1), Messages: Conversation("a", 4),
		Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}, CostUSD: 0.5,
		State: map[string]json.RawMessage{"k": json.RawMessage(`1`)}}
	mustAppend(t, s, "idem", first)
	// A retry, even one carrying different content, is a no-op.
	retry := session.Turn{ID: "run-1", Time: at(9), Messages: Conversation("b", 8),
		Usage: llm.Usage{InputTokens: 99}, CostUSD: 9,
		State: map[string]json.RawMessage{"k": json.RawMessage(`2`)}}
	for range 3 {
		if err := s.Append(t.Context(), "idem", retry); err != nil {
			t.Fatalf("repeated Append: err = %v, want nil", err)
		}
	}
	mustAppend(t, s, "idem", turn("run-2", 2, llm.UserText("next")))
	if err := s.Append(t.Context(), "idem", first); err != nil { // an older id, not the last one
		t.Fatalf("Append of an older turn id: %v", err)
	}
	got := mustLoad(t, s, "idem")
	equalMessages(t, "after retries", got.Messages, append(Conversation("a", 4), llm.UserText("next")))
	if got.Turns != 2 || got.Usage != first.Usage || got.CostUSD != 0.5 || string(got.State["k"]) != "1" ||
		!got.UpdatedAt.Equal(at(2)) {
		t.Errorf("retried appends changed the totals: %+v", got)
	}
	// The same turn id in another session is a different turn.
	mustAppend(t, s, "idem2", first)
	if got := mustLoad(t, s, "idem2"); len(got.Messages) != 4 {
		t.Errorf("turn id reused in another session: %d messages, want 4", len(got.Messages))
	}
}

func testEmptyTurnID(t *testing.T, s session.Store) {
	err := s.Append(t.Context(), "anon", session.Turn{Messages: []llm.Message{llm.UserText("x")}})
	if !errors.Is(err, session.ErrInvalidID) {
		t.Fatalf("Append of a turn without an ID: err = %v, want ErrInvalidID (an unkeyed append could never be retried safely)", err)
	}
	if _, err := s.Load(t.Context(), "anon"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("rejected turn created its session: %v", err)
	}
}

func testIsolation(t *testing.T, s session.Store) {
	for i := range 3 {
		for _, id := range []string{"left", "right"} {
			mustAppend(t, s, id, session.Turn{
				ID: fmt.Sprintf("t%d", i), Time: at(i), // same turn ids in both sessions
				Messages: Conversation(id, 2),
				Usage:    llm.Usage{InputTokens: len(id)},
				State:    map[string]json.RawMessage{"who": json.RawMessage(`"` + id + `"`)},
			})
		}
	}
	for _, id := range []string{"left", "right"} {
		got := mustLoad(t, s, id)
		want := slices.Concat(Conversation(id, 2), Conversation(id, 2), Conversation(id, 2))
		equalMessages(t, id, got.Messages, want)
		if got.Usage.InputTokens != 3*len(id) || string(got.State["who"]) != `"`+id+`"` {
			t.Errorf("%s: totals leaked between sessions: %+v", id, got)
		}
	}
	if err := s.Delete(t.Context(), "left"); err != nil {
		t.Fatal(err)
	}
	if got := mustLoad(t, s, "right"); len(got.Messages) != 6 {
		t.Errorf("deleting left changed right: %d messages", len(got.Messages))
	}
}

func testTotals(t *testing.T, s session.Store) {
	turns := []session.Turn{
		{ID: "1", Time: at(1), Messages: Conversation("a", 2),
			Usage: llm.Usage{InputTokens: 100, OutputTokens: 20, CachedInputTokens: 50, CacheCreationTokens: 10, ReasoningTokens: 5}, CostUSD: 0.25,
			State:  map[string]json.RawMessage{"a": json.RawMessage(`{"n":1}`), "b": json.RawMessage(`"keep"`), "c": json.RawMessage(`[1]`)},
			Prefix: session.PrefixStats{Requests: 1, PrefixStable: 0, LastDivergence: -1}, Hashes: []uint64{11, 22}},
		{ID: "2", Time: at(2), Messages: Conversation("b", 2),
			Usage: llm.Usage{InputTokens: 200, OutputTokens: 30, CachedInputTokens: 150}, CostUSD: 0.5,
			State:  map[string]json.RawMessage{"a": json.RawMessage(`{"n":2}`), "c": nil, "n": json.RawMessage(`null`)},
			Prefix: session.PrefixStats{Requests: 2, PrefixStable: 1, LastDivergence: -1}, Hashes: []uint64{11, 22, 33, 1<<64 - 1}},
		// No Hashes: the prefix statistic is left as it was.
		{ID: "3", Time: at(3), Messages: Conversation("c", 1), Usage: llm.Usage{OutputTokens: 1},
			Prefix: session.PrefixStats{Requests: 99}},
	}
	for _, tr := range turns {
		mustAppend(t, s, "totals", tr)
	}
	got := mustLoad(t, s, "totals")
	wantUsage := llm.Usage{InputTokens: 300, OutputTokens: 51, CachedInputTokens: 200, CacheCreationTokens: 10, ReasoningTokens: 5}
	if got.Usage != wantUsage {
		t.Errorf("Usage = %+v, want %+v", got.Usage, wantUsage)
	}
	if got.CostUSD != 0.75 {
		t.Errorf("CostUSD = %v, want 0.75", got.CostUSD)
	}
	wantState := map[string]string{"a": `{"n":2}`, "b": `"keep"`, "n": `null`}
	gotState := map[string]string{}
	for k, v := range got.State {
		gotState[k] = string(v)
	}
	if !reflect.DeepEqual(gotState, wantState) {
		t.Errorf("State = %v, want %v (a nil value deletes a key; JSON null is a value)", gotState, wantState)
	}
	if want := (session.PrefixStats{Requests: 2, PrefixStable: 1, LastDivergence: -1}); got.Prefix != want {
		t.Errorf("Prefix = %+v, want %+v (a turn without Hashes leaves it)", got.Prefix, want)
	}
	if want := []uint64{11, 22, 33, 1<<64 - 1}; !slices.Equal(got.Hashes, want) {
		t.Errorf("Hashes = %v, want %v", got.Hashes, want)
	}
	if got.Turns != 3 || len(got.Messages) != 5 {
		t.Errorf("Turns/messages = %d/%d, want 3/5", got.Turns, len(got.Messages))
	}
}

func testTimes(t *testing.T, s session.Store) {
	// Times come back equal (to the nanosecond) and in UTC, whatever zone
	// they were given in.
	zone := time.FixedZone("UTC+8", 8*3600)
	mustAppend(t, s, "times", session.Turn{ID: "1", Time: at(10).In(zone), Messages: Conversation("a", 1)})
	// An older turn does not move UpdatedAt back.
	mustAppend(t, s, "times", session.Turn{ID: "2", Time: at(5), Messages: Conversation("b", 1)})
	got := mustLoad(t, s, "times")
	if !got.CreatedAt.Equal(at(10)) || !got.UpdatedAt.Equal(at(10)) {
		t.Errorf("CreatedAt/UpdatedAt = %v/%v, want %v/%v", got.CreatedAt, got.UpdatedAt, at(10), at(10))
	}
	if got.CreatedAt.Location() != time.UTC || got.UpdatedAt.Location() != time.UTC {
		t.Errorf("times not in UTC: %v, %v", got.CreatedAt.Location(), got.UpdatedAt.Location())
	}
	// A zero Time means now.
	before := time.Now()
	mustAppend(t, s, "times", session.Turn{ID: "3", Messages: Conversation("c", 1)})
	got = mustLoad(t, s, "times")
	if got.UpdatedAt.Before(before.Add(-time.Second)) || got.UpdatedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("UpdatedAt after a turn without a time = %v, want about %v", got.UpdatedAt, before)
	}
}

func testCopies(t *testing.T, s session.Store) {
	img := []byte{1, 2, 3}
	input := json.RawMessage(`{"a":1}`)
	state := json.RawMessage(`"v"`)
	tr := session.Turn{ID: "1", Time: at(1),
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{
			llm.Image{Data: img, MediaType: "image/png"},
			llm.ToolUse{ID: "c", Name: "f", Input: input},
		}}},
		State:  map[string]json.RawMessage{"k": state},
		Hashes: []uint64{7},
	}
	mustAppend(t, s, "copies", tr)
	// The caller reuses its buffers.
	img[0] = 99
	input[2] = 'X'
	state[1] = 'X'
	tr.Messages[0].Content[0] = llm.Text{Text: "changed"}
	tr.State["k2"] = json.RawMessage(`1`)
	tr.Hashes[0] = 8

	want := []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{
		llm.Image{Data: []byte{1, 2, 3}, MediaType: "image/png"},
		llm.ToolUse{ID: "c", Name: "f", Input: json.RawMessage(`{"a":1}`)},
	}}}
	got := mustLoad(t, s, "copies")
	equalMessages(t, "after the caller changed its input", got.Messages, want)
	if len(got.State) != 1 || string(got.State["k"]) != `"v"` || !slices.Equal(got.Hashes, []uint64{7}) {
		t.Fatalf("store shares state with the caller: %v %v", got.State, got.Hashes)
	}
	// The caller changes what Load gave it.
	got.Messages[0].Content[0].(llm.Image).Data[0] = 42
	got.Messages[0].Content[1].(llm.ToolUse).Input[2] = 'Y'
	got.Messages = append(got.Messages[:0], llm.UserText("replaced"))
	got.State["k"][1] = 'Y'
	got.State["new"] = json.RawMessage(`2`)
	got.Hashes[0] = 9
	again := mustLoad(t, s, "copies")
	equalMessages(t, "after the caller changed a loaded session", again.Messages, want)
	if len(again.State) != 1 || string(again.State["k"]) != `"v"` || !slices.Equal(again.Hashes, []uint64{7}) {
		t.Fatalf("Load shares state with the caller: %v %v", again.State, again.Hashes)
	}
}
