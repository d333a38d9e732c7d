package session_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/internal/stored"
)

// referenceHashes computes the prefix hashes the way HashVersion documents
// them, with the standard library's FNV-1a and SHA-256.
func referenceHashes(t *testing.T, msgs []llm.Message) []uint64 {
	t.Helper()
	h := fnv.New64a()
	out := make([]uint64, len(msgs))
	for i, m := range msgs {
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		h.Write(sum[:8]) // the message hash, little-endian: the digest's first 8 bytes as they are
		h.Write([]byte{0x1e})
		out[i] = h.Sum64()
	}
	return out
}

func TestPrefixHashesFollowTheDocumentedDefinition(t *testing.T) {
	t.Parallel()
	msgs := []llm.Message{
		llm.SystemText("be brief"),
		llm.UserText("hi <b>&</b> 你好"),
		{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.Text{Text: "let me look"},
			llm.ToolUse{ID: "c1", Name: "f", Input: json.RawMessage(`{"a": [1, 2]}`)},
		}},
		llm.ToolResultText("c1", "done", false),
		{Role: llm.RoleAssistant},
	}
	got, err := session.PrefixHashes(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if want := referenceHashes(t, msgs); !slices.Equal(got, want) {
		t.Errorf("PrefixHashes = %x, want %x", got, want)
	}
	// The values are stored, so they must never change under a version:
	// these were computed when version 2 was defined.
	golden := []uint64{0x9e973b27a8c70094, 0xfb84aaad687bc398, 0x701ca74560c42a07, 0xf0d8c382fd328c18, 0xaa7e7b98b421229a}
	if session.HashVersion != 2 || !slices.Equal(got, golden) {
		t.Errorf("version %d hashes = %#x, want %#x", session.HashVersion, got, golden)
	}
	for i, m := range msgs {
		data, _ := json.Marshal(m)
		h, err := session.MessageHash(m)
		if err != nil || h != session.StoredMessageHash(data) {
			t.Errorf("message %d: MessageHash = %x, %v; StoredMessageHash of its JSON = %x", i, h, err, session.StoredMessageHash(data))
		}
	}
}

func TestMessageHashIsTheStorageJSONs(t *testing.T) {
	t.Parallel()
	hash := func(m llm.Message) uint64 {
		h, err := session.MessageHash(m)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	call := func(input string) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse{ID: "c", Name: "f", Input: json.RawMessage(input)}}}
	}
	// The same storage JSON, the same hash: the input is compacted.
	if hash(call(`{"a": 1}`)) != hash(call(`{"a":1}`)) {
		t.Error("two messages with the same storage JSON hash differently")
	}
	// No content, nil or empty, is the same JSON.
	if hash(llm.Message{Role: llm.RoleAssistant}) != hash(llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{}}) {
		t.Error("nil and empty content hash differently")
	}
	for _, pair := range [][2]llm.Message{
		{llm.ToolResultText("c1", "x", false), llm.ToolResultText("c1", "x", true)},
		{llm.ToolResultText("c1", "x", false), llm.ToolResultText("c2", "x", false)},
		{llm.UserText("x"), llm.AssistantText("x")},
		{call(`{"a":1}`), call(`{"a":2}`)},
	} {
		if hash(pair[0]) == hash(pair[1]) {
			t.Errorf("%+v and %+v hash the same", pair[0], pair[1])
		}
	}
	if _, err := session.MessageHash(llm.Message{}); err == nil {
		t.Error("a message without a role hashed without error")
	}
}

// history returns n messages of a conversation tagged tag.
func history(tag string, n int) []llm.Message {
	out := make([]llm.Message, 0, n)
	for i := 0; len(out) < n; i++ {
		id := fmt.Sprintf("%s-call-%d", tag, i)
		for _, m := range []llm.Message{
			llm.UserText(fmt.Sprintf("%s question %d", tag, i)),
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse{ID: id, Name: "f", Input: json.RawMessage(`{"i":` + fmt.Sprint(i) + `}`)}}},
			llm.ToolResultText(id, fmt.Sprintf("result %d", i), i%5 == 0),
			llm.AssistantText(fmt.Sprintf("%s answer %d", tag, i)),
		} {
			if len(out) < n {
				out = append(out, m)
			}
		}
	}
	return out
}

func storedHashes(t *testing.T, msgs []llm.Message) []uint64 {
	t.Helper()
	out := make([]uint64, len(msgs))
	for i, m := range msgs {
		h, err := session.MessageHash(m)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = h
	}
	return out
}

func touch(t *testing.T, s *session.Session, req []llm.Message) {
	t.Helper()
	if err := s.TouchRequest(req); err != nil {
		t.Fatal(err)
	}
	want, err := session.PrefixHashes(req)
	if err != nil {
		t.Fatal(err)
	}
	if d := session.Divergence(want, s.Hashes); d >= 0 || len(s.Hashes) != len(want) {
		t.Fatalf("TouchRequest hashes differ from PrefixHashes at %d (%d and %d hashes)", d, len(s.Hashes), len(want))
	}
}

func TestTouchRequestUsesKnownHashesOnly(t *testing.T) {
	t.Parallel()
	// A message whose hash is known is not encoded again: this one cannot
	// be encoded at all.
	bad := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse{ID: "c", Name: "f", Input: json.RawMessage(`{"open":`)}}}
	s := &session.Session{Messages: []llm.Message{llm.UserText("q"), bad}}
	s.SetMessageHashes(slices.Clone(s.Messages), []uint64{0, 42}) // message 0's is wrong on purpose: a store's word is taken
	if h, ok := s.KnownMessageHash(1); !ok || h != 42 {
		t.Fatalf("KnownMessageHash(1) = %x, %v", h, ok)
	}
	if err := s.TouchRequest(slices.Clone(s.Messages)); err != nil {
		t.Fatalf("TouchRequest encoded a message whose hash it knew: %v", err)
	}
	// Replacing the message in the request, or in the session, is seen.
	req := slices.Clone(s.Messages)
	req[1] = llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse{ID: "c", Name: "f", Input: json.RawMessage(`{"other":`)}}}
	if err := s.TouchRequest(req); err == nil {
		t.Fatal("a replaced message was not hashed afresh")
	}
	s.Messages[1] = llm.AssistantText("fine")
	if _, ok := s.KnownMessageHash(1); ok {
		t.Error("KnownMessageHash serves the hash of a replaced message")
	}
	touch(t, s, s.Messages[1:])
	// So are changes to a message's fields.
	s = &session.Session{Messages: []llm.Message{llm.ToolResultText("c", "x", false)}}
	s.SetMessageHashes(slices.Clone(s.Messages), storedHashes(t, s.Messages))
	s.Messages[0].IsError = true
	touch(t, s, s.Messages)
	s.Messages[0].ToolCallID = "d"
	touch(t, s, s.Messages)
	s.Messages[0].Role = llm.RoleUser
	s.Messages[0].ToolCallID = ""
	touch(t, s, s.Messages)
}

func TestTouchRequestOnEveryShapeOfRequest(t *testing.T) {
	t.Parallel()
	sys := llm.SystemText("be brief")
	for _, known := range []bool{false, true} {
		t.Run(fmt.Sprintf("store-hashes=%v", known), func(t *testing.T) {
			s := &session.Session{Messages: history("h", 60)}
			if known {
				s.SetMessageHashes(slices.Clone(s.Messages[:50]), storedHashes(t, s.Messages[:50])) // the rest is not known
			}
			h := s.Messages
			in := llm.UserText("new")
			touch(t, s, slices.Concat([]llm.Message{sys}, h, []llm.Message{in}))
			touch(t, s, slices.Concat(h, []llm.Message{in}))                                  // no system message
			touch(t, s, slices.Concat([]llm.Message{sys}, h[20:], []llm.Message{in}))         // oldest turns dropped
			touch(t, s, slices.Concat([]llm.Message{sys}, h[:10], h[30:], []llm.Message{in})) // a middle cut
			edited := slices.Clone(h)
			edited[7] = llm.ToolResultText(edited[7].ToolCallID, "[cleared]", false) // a compaction's replacement
			touch(t, s, slices.Concat([]llm.Message{sys}, edited, []llm.Message{in}))
			touch(t, s, slices.Concat([]llm.Message{sys}, h[40:], h[:40])) // out of order
			touch(t, s, slices.Concat(h, h))                               // twice
			touch(t, s, nil)
		})
	}
}

func TestTouchRequestRandomized(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		s := &session.Session{Messages: history(fmt.Sprint(round), rng.IntN(80))}
		if rng.IntN(2) == 0 {
			given := slices.Clone(s.Messages[:rng.IntN(len(s.Messages)+1)])
			s.SetMessageHashes(given, storedHashes(t, given))
		}
		for range 4 {
			var req []llm.Message
			if rng.IntN(2) == 0 {
				req = append(req, llm.SystemText("sys"))
			}
			h := s.Messages
			lo := rng.IntN(len(h) + 1)
			hi := lo + rng.IntN(len(h)-lo+1)
			req = append(req, h[lo:hi]...)
			if len(req) > 0 && rng.IntN(3) == 0 {
				i := rng.IntN(len(req))
				req[i] = llm.UserText("replaced") // the request's own copy
			}
			req = append(req, llm.UserText(fmt.Sprint("input ", rng.Int())))
			touch(t, s, req)
			if rng.IntN(3) == 0 && len(s.Messages) > 0 {
				s.Messages[rng.IntN(len(s.Messages))] = llm.AssistantText("edited in the session")
			}
			s.Apply(session.Turn{Messages: []llm.Message{req[len(req)-1], llm.AssistantText("ok")}})
		}
	}
}

func TestClonesShareWhatTheyLearn(t *testing.T) {
	t.Parallel()
	// A session made by hand starts sharing once Apply (or TouchRequest,
	// or SetMessageHashes) has been called on it: the agent applies each
	// turn to the caller's session and works on a clone of it.
	s := &session.Session{}
	s.Apply(session.Turn{Messages: history("c", 8)})
	c := s.Clone()
	touch(t, c, slices.Concat([]llm.Message{llm.SystemText("x")}, c.Messages))
	for i, m := range s.Messages {
		want, _ := session.MessageHash(m)
		if h, ok := s.KnownMessageHash(i); !ok || h != want {
			t.Errorf("message %d: the original knows %x, %v; want %x learned by its clone", i, h, ok, want)
		}
	}
	// A clone that changes its messages does not change what the
	// original's are known as.
	c.Messages[3] = llm.UserText("other")
	touch(t, c, c.Messages)
	touch(t, s, s.Messages)
	if h, ok := s.KnownMessageHash(3); !ok || h == 0 {
		t.Errorf("the original lost message 3's hash: %x, %v", h, ok)
	}
}

func TestTouchRequestAfterAnotherHashVersion(t *testing.T) {
	t.Parallel()
	// Statistics stored before hash versions were recorded: the hashes
	// cannot be compared, so the next request starts afresh.
	s := &session.Session{Messages: history("v", 4), Hashes: []uint64{1, 2, 3}, Prefix: session.PrefixStats{Requests: 5, PrefixStable: 4, LastDivergence: -1}}
	touch(t, s, s.Messages)
	if want := (session.PrefixStats{Requests: 6, PrefixStable: 4, LastDivergence: -1, HashVersion: session.HashVersion}); s.Prefix != want {
		t.Errorf("stats = %+v, want %+v", s.Prefix, want)
	}
	touch(t, s, append(s.Messages, llm.UserText("more")))
	if s.Prefix.PrefixStable != 5 {
		t.Errorf("the next request did not extend it: %+v", s.Prefix)
	}
}

func TestSetMessageHashesChecksItsLength(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("SetMessageHashes accepted more hashes than messages")
		}
	}()
	h := history("x", 1)
	(&session.Session{Messages: h}).SetMessageHashes(h, []uint64{1, 2})
}

// A hash a store gave is checked against the store's copy of the message,
// so even a change written into a message's blocks is seen.
func TestStoreHashesSurviveChangesInPlace(t *testing.T) {
	t.Parallel()
	given := history("g", 8)
	s := &session.Session{Messages: deepCopy(t, given)}
	s.SetMessageHashes(given, storedHashes(t, given))
	touch(t, s, s.Messages)
	s.Messages[2].Content[0] = llm.Text{Text: "written in place"}
	if _, ok := s.KnownMessageHash(2); ok {
		t.Error("a message changed in place kept the store's hash")
	}
	touch(t, s, s.Messages)
}

func deepCopy(t testing.TB, msgs []llm.Message) []llm.Message {
	t.Helper()
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func BenchmarkTouchRequest(b *testing.B) {
	h := history("b", 10_000)
	sys := llm.SystemText("be brief")
	for _, known := range []bool{false, true} {
		b.Run(fmt.Sprintf("known=%v", known), func(b *testing.B) {
			b.ReportAllocs()
			s := &session.Session{Messages: h}
			if known {
				hs := make([]uint64, len(h))
				for i, m := range h {
					hs[i], _ = session.MessageHash(m)
				}
				s = &session.Session{Messages: stored.CloneMessages(h)} // as a store loads it
				s.SetMessageHashes(h, hs)
			}
			req := slices.Concat([]llm.Message{sys}, s.Messages, []llm.Message{llm.UserText("new")})
			for b.Loop() {
				if err := s.TouchRequest(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
