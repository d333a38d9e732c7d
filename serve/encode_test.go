package serve

import (
	"math/rand/v2"
	"testing"

	"github.com/agcore/agcore/internal/httpx"
)

// TestTextChunkEncoding checks the hand-written text chunk against
// encoding/json's encoding of the same chunk with SetEscapeHTML(false).
func TestTextChunkEncoding(t *testing.T) {
	texts := []string{"", "hello", `quote " and \ backslash`, "new\nline\ttab\rcr\bbs\fff", "\x00\x01\x1f\x7f",
		"<html> & </html>", "héllo wörld ✓ 😀", "\u2028\u2029", "bad \xff utf-8 \xc3", "\xed\xa0\x80 surrogate"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		texts = append(texts, string(b))
	}
	for _, text := range texts {
		got := appendTextChunk(nil, "chatcmpl-1", `mo"del`, 1700000000, text)
		want := marshalNoHTML(t, chatChunk{ID: "chatcmpl-1", Object: "chat.completion.chunk", Created: 1700000000, Model: `mo"del`,
			Choices: []chunkChoice{{Delta: chatDelta{Content: &text}}}})
		if string(got) != string(want) {
			t.Fatalf("text %q:\n got %s\nwant %s", text, got, want)
		}
	}
}

func FuzzTextChunkEncoding(f *testing.F) {
	f.Add("hello \"world\" <\n>")
	f.Fuzz(func(t *testing.T, text string) {
		got := appendTextChunk(nil, "id", "m", 1, text)
		want := marshalNoHTML(t, chatChunk{ID: "id", Object: "chat.completion.chunk", Created: 1, Model: "m", Choices: []chunkChoice{{Delta: chatDelta{Content: &text}}}})
		if string(got) != string(want) {
			t.Fatalf("text %q:\n got %s\nwant %s", text, got, want)
		}
	})
}

// marshalNoHTML is encoding/json's encoding of v with SetEscapeHTML(false),
// the rule of the hand-written chunk encoder (internal/jsonw).
func marshalNoHTML(t testing.TB, v any) []byte {
	b, err := httpx.MarshalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
