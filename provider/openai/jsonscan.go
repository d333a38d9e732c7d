package openai

import (
	"github.com/agcore/agcore/internal/jsonscan"
)

// The scanning primitives of the fast chunk parser (chunk.go): each
// validates what it consumes as strictly as encoding/json does, so that
// anything the fast parser accepts, encoding/json accepts too.

// strOrNull reads a string, refusing invalid UTF-8 (encoding/json would
// replace the bad bytes), or null.
func (p *fastParser) strOrNull() (jstr, bool) {
	raw, esc, ok := p.StringOrNull()
	return jstr{raw: raw, esc: esc}, ok
}

// skip validates and skips any value.
func (p *fastParser) skip() bool { return p.SkipValue() }

// appendUnescaped appends the decoded form of a string's raw text (already
// validated by RawString) to dst, decoding escapes as encoding/json does: a
// surrogate pair becomes one rune, a lone surrogate U+FFFD.
func appendUnescaped(dst, s []byte) []byte {
	dst, _ = jsonscan.AppendUnescaped(dst, s)
	return dst
}
