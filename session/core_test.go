package session_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

type note struct {
	Count int    `json:"count"`
	Last  string `json:"last"`
}

func TestStateBag(t *testing.T) {
	t.Parallel()
	s := &session.Session{} // zero value: no bag yet
	if _, ok, err := session.GetState[note](s, "memory"); ok || err != nil {
		t.Fatalf("absent key: ok=%v err=%v, want false, nil", ok, err)
	}
	if err := session.SetState(s, "memory", note{Count: 2, Last: "hi"}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := session.GetState[note](s, "memory")
	if !ok || err != nil || got != (note{2, "hi"}) {
		t.Fatalf("GetState = %+v, %v, %v", got, ok, err)
	}
	if _, ok, err := session.GetState[int](s, "memory"); !ok || err == nil {
		t.Errorf("decoding into the wrong type: ok=%v err=%v, want true and an error", ok, err)
	}
	if err := session.SetState(s, "bad", func() {}); err == nil {
		t.Error("SetState of an unencodable value succeeded")
	}
	session.DeleteState(s, "memory")
	if _, ok, _ := session.GetState[note](s, "memory"); ok {
		t.Error("key still present after DeleteState")
	}
}

func TestStateDelta(t *testing.T) {
	t.Parallel()
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name          string
		before, after map[string]json.RawMessage
		want          map[string]json.RawMessage
	}{
		{"no change is nil", map[string]json.RawMessage{"a": raw("1")}, map[string]json.RawMessage{"a": raw("1")}, nil},
		{"added key", nil, map[string]json.RawMessage{"a": raw("1")}, map[string]json.RawMessage{"a": raw("1")}},
		{"changed key", map[string]json.RawMessage{"a": raw("1")}, map[string]json.RawMessage{"a": raw("2")}, map[string]json.RawMessage{"a": raw("2")}},
		{"removed key maps to nil", map[string]json.RawMessage{"a": raw("1")}, map[string]json.RawMessage{}, map[string]json.RawMessage{"a": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := session.StateDelta(tt.before, tt.after); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("StateDelta = %v, want %v", got, tt.want)
			}
		})
	}
}

func msgs(texts ...string) []llm.Message {
	out := []llm.Message{llm.SystemText("be brief")}
	for i, s := range texts {
		if i%2 == 0 {
			out = append(out, llm.UserText(s))
		} else {
			out = append(out, llm.AssistantText(s))
		}
	}
	return out
}

func TestPrefixHashesAreCumulativeOverTheStorageJSON(t *testing.T) {
	t.Parallel()
	a, err := session.PrefixHashes(msgs("hi", "hello", "how are you"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := session.PrefixHashes(msgs("hi", "hello", "something else"))
	if len(a) != 4 || !reflect.DeepEqual(a[:3], b[:3]) || a[3] == b[3] {
		t.Errorf("hashes %x and %x: want equal prefixes and a different last hash", a, b)
	}
	// A change in one message changes every later hash, not just its own.
	c, _ := session.PrefixHashes(msgs("HI", "hello", "how are you"))
	for i := 1; i < 4; i++ {
		if a[i] == c[i] {
			t.Errorf("hash %d unchanged after message 1 changed", i)
		}
	}
	// A tool result's is_error flag is part of its bytes.
	r1, _ := session.PrefixHashes([]llm.Message{llm.ToolResultText("c1", "x", false)})
	r2, _ := session.PrefixHashes([]llm.Message{llm.ToolResultText("c1", "x", true)})
	if r1[0] == r2[0] {
		t.Error("is_error does not change the hash")
	}
	if _, err := session.PrefixHashes([]llm.Message{{}}); err == nil {
		t.Error("a message without a role hashed without error")
	}
}

func TestDivergence(t *testing.T) {
	t.Parallel()
	h := func(m ...string) []uint64 { x, _ := session.PrefixHashes(msgs(m...)); return x }
	tests := []struct {
		name       string
		prev, next []uint64
		want       int
	}{
		{"appending extends", h("a", "b"), h("a", "b", "c", "d"), -1},
		{"identical extends", h("a", "b"), h("a", "b"), -1},
		{"changed last message diverges there", h("a", "b"), h("a", "x"), 2},
		{"changed first user message", h("a", "b"), h("x", "b", "c"), 1},
		{"changed system message diverges at 0", h("a"), func() []uint64 {
			x, _ := session.PrefixHashes([]llm.Message{llm.SystemText("other"), llm.UserText("a")})
			return x
		}(), 0},
		{"shorter matching request diverges at its end", h("a", "b", "c"), h("a"), 2},
		{"no previous request extends", nil, h("a"), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := session.Divergence(tt.prev, tt.next); got != tt.want {
				t.Errorf("Divergence = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestTouchRequestKeepsThePrefixStatistic(t *testing.T) {
	t.Parallel()
	s := &session.Session{}
	steps := []struct {
		name string
		msgs []llm.Message
		want session.PrefixStats
	}{
		{"first request has nothing to extend", msgs("a"), session.PrefixStats{Requests: 1, PrefixStable: 0, LastDivergence: -1, HashVersion: session.HashVersion}},
		{"next turn extends it", msgs("a", "b", "c"), session.PrefixStats{Requests: 2, PrefixStable: 1, LastDivergence: -1, HashVersion: session.HashVersion}},
		{"an edited history diverges", msgs("a", "B", "c", "d", "e"), session.PrefixStats{Requests: 3, PrefixStable: 1, LastDivergence: 2, HashVersion: session.HashVersion}},
		{"extending the edited one is stable again", msgs("a", "B", "c", "d", "e", "f", "g"), session.PrefixStats{Requests: 4, PrefixStable: 2, LastDivergence: -1, HashVersion: session.HashVersion}},
	}
	for _, st := range steps {
		if err := s.TouchRequest(st.msgs); err != nil {
			t.Fatal(err)
		}
		if s.Prefix != st.want {
			t.Errorf("%s: stats = %+v, want %+v", st.name, s.Prefix, st.want)
		}
		if len(s.Hashes) != len(st.msgs) {
			t.Errorf("%s: %d hashes for %d messages", st.name, len(s.Hashes), len(st.msgs))
		}
	}
}

func TestApplyAddsATurnLikeAStore(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &session.Session{ID: "s", State: map[string]json.RawMessage{"keep": json.RawMessage(`1`), "drop": json.RawMessage(`2`)}}
	s.Apply(session.Turn{
		ID:       "run1",
		Messages: []llm.Message{llm.UserText("hi"), llm.AssistantText("hello")},
		Usage:    llm.Usage{InputTokens: 10, OutputTokens: 2},
		CostUSD:  0.5,
		State:    map[string]json.RawMessage{"drop": nil, "new": json.RawMessage(`"x"`)},
		Prefix:   session.PrefixStats{Requests: 1, LastDivergence: -1},
		Hashes:   []uint64{1, 2},
		Time:     t0,
	})
	s.Apply(session.Turn{ID: "run2", Messages: []llm.Message{llm.UserText("again")}, Usage: llm.Usage{InputTokens: 1}, Time: t0.Add(time.Minute)})

	if len(s.Messages) != 3 || s.Turns != 2 || s.Usage.InputTokens != 11 || s.CostUSD != 0.5 {
		t.Errorf("messages %d, turns %d, usage %+v, cost %v", len(s.Messages), s.Turns, s.Usage, s.CostUSD)
	}
	wantState := map[string]json.RawMessage{"keep": json.RawMessage(`1`), "new": json.RawMessage(`"x"`)}
	if !reflect.DeepEqual(s.State, wantState) {
		t.Errorf("state = %s", s.State)
	}
	if s.Prefix.Requests != 1 || !reflect.DeepEqual(s.Hashes, []uint64{1, 2}) {
		t.Errorf("a turn without hashes replaced the statistic: %+v %v", s.Prefix, s.Hashes)
	}
	if !s.CreatedAt.Equal(t0) || !s.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("created %v updated %v", s.CreatedAt, s.UpdatedAt)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	t.Parallel()
	s := &session.Session{ID: "s", Messages: msgs("a"), Hashes: []uint64{1}}
	_ = session.SetState(s, "k", 1)
	c := s.Clone()
	c.Messages = append(c.Messages, llm.UserText("more"))
	c.Messages[0] = llm.SystemText("changed")
	_ = session.SetState(c, "k", 2)
	c.Hashes[0] = 9
	if len(s.Messages) != 2 || s.Messages[0].Text() != "be brief" || string(s.State["k"]) != "1" || s.Hashes[0] != 1 {
		t.Errorf("changing the clone changed the original: %+v", s)
	}
}
