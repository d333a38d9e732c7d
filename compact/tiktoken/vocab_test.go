package tiktoken

import (
	"flag"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer/codec"
)

var update = flag.Bool("update", false, "write the vocabulary files from github.com/tiktoken-go/tokenizer")

// reference is the tokenizer whose vocabularies ours are made from.
func reference(enc Encoding) *codec.Codec {
	if enc == O200kBase {
		return codec.NewO200kBase()
	}
	return codec.NewCl100kBase()
}

// referenceTokens lists the reference vocabulary in rank order ("" for a
// rank with no token; the special tokens are not part of it).
func referenceTokens(enc Encoding) []string {
	ref := reference(enc)
	var toks []string
	empty := 0
	for id := uint(0); empty < 64; id++ {
		s, err := ref.Decode([]uint{id})
		if err != nil {
			break
		}
		if s == "" {
			empty++
		} else {
			empty = 0
		}
		toks = append(toks, s)
	}
	return toks[:len(toks)-empty]
}

// TestVocabulariesMatchTheTokenizer: the compiled-in vocabulary files hold
// exactly the tokenizer's tokens, rank by rank (-update rewrites them).
func TestVocabulariesMatchTheTokenizer(t *testing.T) {
	for _, tc := range []struct {
		enc  Encoding
		file string
		data []byte
	}{{O200kBase, "o200k_base.tkv", o200kData}, {Cl100kBase, "cl100k_base.tkv", cl100kData}} {
		want := referenceTokens(tc.enc)
		if *update {
			if err := os.WriteFile(tc.file, encodeVocab(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := decodeVocab(tc.data)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d tokens, the tokenizer has %d", tc.enc, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: rank %d is %q, the tokenizer's %q", tc.enc, i, got[i], want[i])
			}
		}
	}
}

// TestCountsMatchTheTokenizer: our byte-pair merge counts what the
// tokenizer counts, on text of every kind, random text and long runs that
// take the heap path. (Not on invalid UTF-8: next to U+007F the tokenizer
// returns tokens that do not spell the input, one fewer than ours.)
func TestCountsMatchTheTokenizer(t *testing.T) {
	texts := []string{
		"", "Hello, world!", "The quick brown fox jumps over the lazy dog.",
		"func main() {\n\tfmt.Println(\"hi\")\n}\n", `{"name":"read_file","arguments":{"path":"README.md"}}`,
		"你好，世界。这是一个测试。", "Ça va? Très bien, merci! Ünïcödé ẞ", "<|endoftext|> is not special in text",
		"   leading and trailing   \n\n\n", "1234567890 3.14159 1e10", "I'm sure they've said we'd go; it's THEIR'S",
		strings.Repeat("=", 500), strings.Repeat("-+", 300), strings.Repeat(" ", 1000) + "x", strings.Repeat("ab", 200),
		strings.Repeat("🙂", 50), "https://example.com/path?query=1&b=2#frag", strings.Repeat("supercalifragilistic", 20),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("abcXYZ019 \n\t.,;:!?'\"()[]{}<>/\\=-+_*&^%$#@~`éüß中文字😀\u200b")
	for range 200 {
		n := rng.IntN(300)
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for _, enc := range []Encoding{O200kBase, Cl100kBase} {
		ref := reference(enc)
		c, err := New(enc)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range texts {
			want, err := ref.Count(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.CountText(s); got != want {
				t.Errorf("%s: %d tokens in %.40q, the tokenizer counts %d", enc, got, s, want)
			}
		}
	}
}
