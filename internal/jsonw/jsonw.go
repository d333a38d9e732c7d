// Package jsonw writes JSON strings the way encoding/json does with
// SetEscapeHTML(false), byte for byte: it is agcore's one JSON string
// encoder, used where a hot path writes JSON by hand (provider/openai's
// request body, serve's streamed text chunks and Responses deltas,
// serve/runlog's event types). The rule:
//
//   - `"` and `\` get a backslash; \b, \f, \n, \r and \t their short
//     escapes; the other bytes below 0x20 \u00XX (lower-case hex);
//   - invalid UTF-8 becomes \ufffd, one per byte that does not start a
//     valid sequence;
//   - U+2028 and U+2029 become \u2028 and \u2029;
//   - everything else (<, >, &, DEL, valid multi-byte UTF-8) is copied.
//
// HTML characters are not escaped: the output is JSON for programs, never
// embedded in an HTML page. Standard library only.
package jsonw

import "unicode/utf8"

// AppendString appends s as a JSON string (see AppendEscaped).
func AppendString[S string | []byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	dst = AppendEscaped(dst, s)
	return append(dst, '"')
}

// Broadcast constants of the word-at-a-time scan.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plain8 reports whether none of the eight bytes of x needs a look:
// all are at least 0x20 and below 0x80, and none is '"' or '\'. A byte at
// or above 0x80 has its high bit set in x. When no byte has, subtracting
// c from every byte (x - c*ones) sets the high bit of a byte below c (and
// maybe, through the borrow, of the bytes above it, which only ever adds
// to a true answer), so with c = 0x20 it finds the control bytes, and
// applied to x^'"' and x^'\' with c = 1 it finds the bytes equal to '"'
// and '\'. The answer for the word is exact; the per-byte bits need not be.
func plain8(x uint64) bool {
	q := x ^ (ones * '"')
	bs := x ^ (ones * '\\')
	return (x|(x-ones*0x20)|(q-ones)|(bs-ones))&highs == 0
}

// AppendEscaped appends the body of s as a JSON string (no quotes),
// escaped by the package's rule. Runs of bytes that need nothing are skipped eight at a time and
// copied whole; a word that needs a look is gone through byte by byte.
func AppendEscaped[S string | []byte](dst []byte, s S) []byte {
	start := 0
	for i := 0; i < len(s); {
		t := s[i:]
		for ; len(t) >= 16; t = t[16:] {
			x := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
				uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
			y := uint64(t[8]) | uint64(t[9])<<8 | uint64(t[10])<<16 | uint64(t[11])<<24 |
				uint64(t[12])<<32 | uint64(t[13])<<40 | uint64(t[14])<<48 | uint64(t[15])<<56
			if !plain8(x) || !plain8(y) {
				break
			}
		}
		for ; len(t) >= 8; t = t[8:] {
			x := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
				uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
			if !plain8(x) {
				break
			}
		}
		i = len(s) - len(t)
		for end := min(i+8, len(s)); i < end; {
			c := s[i]
			if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
				i++
				continue
			}
			if c < utf8.RuneSelf {
				dst = append(dst, s[start:i]...)
				switch c {
				case '"', '\\':
					dst = append(dst, '\\', c)
				case '\b':
					dst = append(dst, '\\', 'b')
				case '\f':
					dst = append(dst, '\\', 'f')
				case '\n':
					dst = append(dst, '\\', 'n')
				case '\r':
					dst = append(dst, '\\', 'r')
				case '\t':
					dst = append(dst, '\\', 't')
				default:
					dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
				}
				i++
				start = i
				continue
			}
			// Only a few bytes are converted, which stays on the stack.
			r, size := utf8.DecodeRuneInString(string(s[i : i+min(len(s)-i, utf8.UTFMax)]))
			switch {
			case r == utf8.RuneError && size == 1:
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
			case r == '\u2028' || r == '\u2029':
				dst = append(dst, s[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			default:
				i += size
				continue
			}
			i += size
			start = i
		}
	}
	return append(dst, s[start:]...)
}

const hexDigits = "0123456789abcdef"
