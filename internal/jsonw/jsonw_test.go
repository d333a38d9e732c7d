package jsonw

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/agcore/agcore/internal/httpx"
)

// reference is encoding/json's encoding of s with SetEscapeHTML(false).
func reference(t testing.TB, s string) []byte {
	b, err := httpx.MarshalJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func check(t testing.TB, s string) {
	t.Helper()
	want := reference(t, s)
	if got := AppendString(nil, s); !bytes.Equal(got, want) {
		t.Fatalf("%q: got %s, want %s", s, got, want)
	}
	if got := AppendString([]byte("x"), []byte(s)); !bytes.Equal(got[1:], want) {
		t.Fatalf("%q as bytes: got %s, want %s", s, got[1:], want)
	}
}

// TestAppendStringMatchesEncodingJSON checks the encoder against
// encoding/json on every single byte, every pair of special bytes, and
// runs long enough for the word-at-a-time scan with a special byte at each
// position.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for c := range 256 {
		check(t, string([]byte{byte(c)}))
		for pos := range 17 {
			b := []byte("abcdefghijklmnopq")
			b[pos] = byte(c)
			check(t, string(b))
		}
	}
	specials := []string{"\"", "\\", "\x00", "\x1f", "\n", "\b", "\f", "\x7f", "\xff", "\xe2\x80", "\u2028", "\u2029", "é", "👋", "<", ">", "&", "\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80"}
	for _, a := range specials {
		for _, b := range specials {
			check(t, a+b)
			check(t, "0123456"+a+b+"0123456789")
			check(t, "0123456789abcdef0123456789"+a+"0123456789abcdef"+b)
		}
	}
}

func TestPlain8(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	pick := []byte{0, 0x1f, 0x20, 0x21, '"', 0x23, 0x5b, '\\', 0x5d, 0x7e, 0x7f, 0x80, 0xff, 'a', 'z'}
	for range 200_000 {
		var x uint64
		want := true
		for k := range 8 {
			c := pick[rng.IntN(len(pick))]
			if rng.IntN(3) == 0 {
				c = byte(rng.Uint32())
			}
			if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				want = false
			}
			x |= uint64(c) << (8 * k)
		}
		if plain8(x) != want {
			t.Fatalf("plain8(%#016x) = %v, want %v", x, !want, want)
		}
	}
}

// FuzzAppendString compares the encoder with encoding/json on any string.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "hello \"world\" <\n>", "\xff\u2028 &", "0123456789abcdef\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { check(t, s) })
}
