package openai

import (
	"bytes"
	"unicode/utf8"

	"github.com/agcore/agcore/internal/jsonscan"
)

// The scanning primitives of the fast chunk parser (chunk.go): each
// validates what it consumes as strictly as encoding/json does, so that
// anything the fast parser accepts, encoding/json accepts too.

// folds reports whether key could name one of the known keys in
// encoding/json's case-insensitive matching: it equals one of them ignoring
// ASCII case, or it is not plain ASCII (Unicode folding could map it to
// one). Either way the fast parser steps aside.
func folds(key []byte, known ...string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	for _, k := range known {
		if len(k) == len(key) && bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}

// key reads the next key of an object and its colon; more is false at the
// closing brace. Keys with escapes are refused.
func (p *fastParser) key(first bool) (key []byte, more, ok bool) {
	c := p.Next()
	if c == '}' {
		return nil, false, true
	}
	if !first {
		if c != ',' {
			return nil, false, false
		}
		c = p.Next()
	}
	if c != '"' {
		return nil, false, false
	}
	raw, f, ok := p.RawString()
	if !ok || f&jsonscan.Escaped != 0 || p.Next() != ':' {
		return nil, false, false
	}
	p.SkipSpace()
	return raw, true, true
}

// elem moves to the next element of an array; more is false at the closing
// bracket.
func (p *fastParser) elem(first bool) (more, ok bool) {
	c := p.SkipSpace()
	if p.Pos >= len(p.Data) {
		return false, false
	}
	if c == ']' {
		p.Pos++
		return false, true
	}
	if !first {
		if c != ',' {
			return false, false
		}
		p.Pos++
		p.SkipSpace()
	}
	return true, true
}

// null consumes a null literal if one is next.
func (p *fastParser) null() bool {
	return p.SkipSpace() == 'n' && p.Literal("null")
}

// emptyArray consumes "[]" (with any space inside) if it is next.
func (p *fastParser) emptyArray() bool {
	if p.SkipSpace() != '[' {
		return false
	}
	save := p.Pos
	p.Pos++
	if p.SkipSpace() == ']' {
		p.Pos++
		return true
	}
	p.Pos = save
	return false
}

// strOrNull reads a string, refusing invalid UTF-8 (encoding/json would
// replace the bad bytes), or null.
func (p *fastParser) strOrNull() (jstr, bool) {
	switch p.SkipSpace() {
	case 'n':
		return jstr{}, p.Literal("null")
	case '"':
		p.Pos++
		raw, f, ok := p.ValidString()
		return jstr{raw: raw, esc: f&jsonscan.Escaped != 0}, ok
	}
	return jstr{}, false
}

// intOrNull reads a plain integer (no fraction, exponent or more than nine
// digits: encoding/json would reject the first two for an int field, and
// the third is not worth the overflow check).
func (p *fastParser) intOrNull() (int, bool) {
	if p.null() {
		return 0, true
	}
	return p.Int()
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
