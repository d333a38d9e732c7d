package openai

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
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

func (p *fastParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// begin consumes the opening bracket c.
func (p *fastParser) begin(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// key reads the next key of an object and its colon; more is false at the
// closing brace. Keys with escapes are refused.
func (p *fastParser) key(first bool) (key []byte, more, ok bool) {
	p.ws()
	if p.i >= len(p.b) {
		return nil, false, false
	}
	if p.b[p.i] == '}' {
		p.i++
		return nil, false, true
	}
	if !first {
		if p.b[p.i] != ',' {
			return nil, false, false
		}
		p.i++
		p.ws()
	}
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false, false
	}
	s, ok := p.str(false)
	if !ok || s.esc {
		return nil, false, false
	}
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != ':' {
		return nil, false, false
	}
	p.i++
	p.ws()
	return s.raw, true, true
}

// elem moves to the next element of an array; more is false at the closing
// bracket.
func (p *fastParser) elem(first bool) (more, ok bool) {
	p.ws()
	if p.i >= len(p.b) {
		return false, false
	}
	if p.b[p.i] == ']' {
		p.i++
		return false, true
	}
	if !first {
		if p.b[p.i] != ',' {
			return false, false
		}
		p.i++
		p.ws()
	}
	return true, true
}

// null consumes a null literal if one is next.
func (p *fastParser) null() bool {
	p.ws()
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

func (p *fastParser) strOrNull() (jstr, bool) {
	if p.null() {
		return jstr{}, true
	}
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return jstr{}, false
	}
	return p.str(true)
}

// intOrNull reads a plain integer (no fraction, exponent or more than nine
// digits: encoding/json would reject the first two for an int field, and
// the third is not worth the overflow check).
func (p *fastParser) intOrNull() (int, bool) {
	if p.null() {
		return 0, true
	}
	i, neg := p.i, false
	if i < len(p.b) && p.b[i] == '-' {
		neg = true
		i++
	}
	start, n := i, 0
	for i < len(p.b) && p.b[i] >= '0' && p.b[i] <= '9' {
		n = n*10 + int(p.b[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 9 || (digits > 1 && p.b[start] == '0') {
		return 0, false
	}
	if i < len(p.b) && (p.b[i] == '.' || p.b[i] == 'e' || p.b[i] == 'E') {
		return 0, false
	}
	p.i = i
	if neg {
		n = -n
	}
	return n, true
}

// strStop marks the bytes a string scan must look at.
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// str reads the string at p.i (which is '"'). With checkUTF8 a string
// holding invalid UTF-8 is refused (encoding/json would replace the bad
// bytes; skipped strings need no check).
func (p *fastParser) str(checkUTF8 bool) (jstr, bool) {
	b := p.b
	i := p.i + 1
	start := i
	esc, high := false, false
	for {
		for i < len(b) && !strStop[b[i]] {
			i++
		}
		if i >= len(b) {
			return jstr{}, false
		}
		switch c := b[i]; {
		case c == '"':
			raw := b[start:i]
			if checkUTF8 && high && !utf8.Valid(raw) {
				return jstr{}, false
			}
			p.i = i + 1
			return jstr{raw: raw, esc: esc}, true
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return jstr{}, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || hex4(b[i+2:i+6]) < 0 {
					return jstr{}, false
				}
				i += 6
			default:
				return jstr{}, false
			}
		case c < 0x20:
			return jstr{}, false
		default:
			high = true
			i++
		}
	}
}

// skip validates and skips any value.
func (p *fastParser) skip() bool {
	p.ws()
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		_, ok := p.str(false)
		return ok
	case c == '{':
		p.i++
		if p.depth++; p.depth > maxFastDepth {
			return false
		}
		for first := true; ; first = false {
			_, more, ok := p.key(first)
			if !ok {
				return false
			}
			if !more {
				p.depth--
				return true
			}
			if !p.skip() {
				return false
			}
		}
	case c == '[':
		p.i++
		if p.depth++; p.depth > maxFastDepth {
			return false
		}
		for first := true; ; first = false {
			more, ok := p.elem(first)
			if !ok {
				return false
			}
			if !more {
				p.depth--
				return true
			}
			if !p.skip() {
				return false
			}
		}
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	default:
		return p.number()
	}
}

func (p *fastParser) literal(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// number skips a number of JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *fastParser) number() bool {
	b, i := p.b, p.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	p.i = i
	return true
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// appendUnescaped appends the decoded form of a string's raw text (already
// validated by str) to dst, decoding escapes as encoding/json does: a
// surrogate pair becomes one rune, a lone surrogate U+FFFD.
func appendUnescaped(dst, s []byte) []byte {
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		s = s[i:]
		if len(s) < 2 {
			return dst
		}
		switch c := s[1]; c {
		case 'u':
			if len(s) < 6 {
				return dst
			}
			r := hex4(s[2:6])
			s = s[6:]
			if utf16.IsSurrogate(r) {
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					if dec := utf16.DecodeRune(r, hex4(s[2:6])); dec != utf8.RuneError {
						dst = utf8.AppendRune(dst, dec)
						s = s[6:]
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		default: // '"', '\\', '/'
			dst = append(dst, c)
		}
		s = s[2:]
	}
	return dst
}
