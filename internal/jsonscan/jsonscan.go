// Package jsonscan holds the low-level scanning primitives shared by
// agcore's hand-written JSON fast paths (the storage decoder of package llm
// and the stream parsers of the providers).
//
// A [Scanner] walks a []byte holding JSON text. Each method checks what it
// consumes as strictly as encoding/json does, so a fast path built on them
// accepts nothing encoding/json rejects. The methods report failure with a
// false result and leave the position wherever they stopped: a caller that
// sees false gives up (and typically hands the input to encoding/json).
// Strings are returned as subslices of the input, without copying, unless
// they hold escapes that must be decoded.
//
// The package imports nothing from agcore, so that any package of the
// module, llm included, can use it.
package jsonscan

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// Scanner reads JSON text from Data starting at Pos.
type Scanner struct {
	Data []byte
	Pos  int

	// Depth is the current nesting, counted by Enter and Leave;
	// MaxDepth is the deepest Enter allows.
	Depth, MaxDepth int
}

// SkipSpace moves past JSON white space and returns the next byte without
// consuming it, or 0 at the end of the data.
func (s *Scanner) SkipSpace() byte {
	for ; s.Pos < len(s.Data); s.Pos++ {
		switch c := s.Data[s.Pos]; c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}

// Next consumes and returns the next byte after white space (0 at the end).
func (s *Scanner) Next() byte {
	c := s.SkipSpace()
	if s.Pos < len(s.Data) {
		s.Pos++
	}
	return c
}

// Consume skips white space and then c, reporting whether c was there; if
// it was not, only the white space is consumed.
func (s *Scanner) Consume(c byte) bool {
	if s.SkipSpace() == c && s.Pos < len(s.Data) {
		s.Pos++
		return true
	}
	return false
}

// AtEnd reports whether only white space is left.
func (s *Scanner) AtEnd() bool {
	s.SkipSpace()
	return s.Pos == len(s.Data)
}

// Literal consumes lit if the data at Pos starts with it (no white space
// is skipped): used for true, false and null, or their rest once the first
// byte has been read.
func (s *Scanner) Literal(lit string) bool {
	if len(s.Data)-s.Pos >= len(lit) && string(s.Data[s.Pos:s.Pos+len(lit)]) == lit {
		s.Pos += len(lit)
		return true
	}
	return false
}

// Enter counts one more level of nesting and reports whether it is within
// MaxDepth; Leave counts one less.
func (s *Scanner) Enter() bool { s.Depth++; return s.Depth <= s.MaxDepth }

// Leave undoes Enter.
func (s *Scanner) Leave() { s.Depth-- }

// Flags describe a string read by RawString.
type Flags uint8

const (
	Escaped  Flags = 1 << iota // the raw text holds escapes still to be decoded
	NonASCII                   // the raw text holds bytes >= 0x80 (its UTF-8 is unchecked)
)

// strStop marks the bytes a string scan must stop at.
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

// RawString reads the rest of a string whose opening quote has been
// consumed and returns the bytes between the quotes, escapes undecoded (a
// subslice of Data). It checks the escapes and refuses raw control
// characters, but not UTF-8: like encoding/json, it lets a skipped or raw
// value keep any bytes (see ValidString).
func (s *Scanner) RawString() (raw []byte, f Flags, ok bool) {
	b := s.Data
	start, i := s.Pos, s.Pos
	for {
		for i < len(b) && !strStop[b[i]] {
			i++
		}
		if i >= len(b) {
			return nil, 0, false
		}
		switch c := b[i]; {
		case c == '"':
			s.Pos = i + 1
			return b[start:i], f, true
		case c == '\\':
			f |= Escaped
			if i+1 >= len(b) {
				return nil, 0, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(b[i+2:]); !ok {
					return nil, 0, false
				}
				i += 6
			default:
				return nil, 0, false
			}
		case c < 0x20:
			return nil, 0, false
		default:
			f |= NonASCII
			i++
		}
	}
}

// ValidString is RawString that also refuses invalid UTF-8, which
// encoding/json would replace with U+FFFD rather than keep.
func (s *Scanner) ValidString() (raw []byte, f Flags, ok bool) {
	raw, f, ok = s.RawString()
	if ok && f&NonASCII != 0 && !utf8.Valid(raw) {
		return nil, 0, false
	}
	return raw, f, ok
}

// Text reads the rest of a string whose opening quote has been consumed
// and returns its contents decoded: a subslice of Data when the string has
// no escapes, else the decoded text in buf (grown if needed, returned for
// reuse; text is valid until buf is next written). It refuses invalid
// UTF-8 and unpaired surrogates, which encoding/json replaces with U+FFFD.
func (s *Scanner) Text(buf []byte) (text, _ []byte, ok bool) {
	b := s.Data
	start, i := s.Pos, s.Pos
	ascii := true
	for {
		for i < len(b) && !strStop[b[i]] {
			i++
		}
		if i >= len(b) {
			return nil, buf, false
		}
		switch c := b[i]; {
		case c == '"':
			s.Pos = i + 1
			raw := b[start:i]
			return raw, buf, ascii || utf8.Valid(raw)
		case c == '\\':
			return s.textEscaped(start, i, buf)
		case c < 0x20:
			return nil, buf, false
		default:
			ascii = false
			i++
		}
	}
}

// textEscaped finishes Text for a string that has its first escape at i,
// decoding as it scans (one pass).
func (s *Scanner) textEscaped(start, i int, buf []byte) (text, _ []byte, ok bool) {
	b := s.Data
	if n := len(b) - start; cap(buf) < n {
		// Room for any string left in Data: one allocation per input.
		buf = make([]byte, 0, n)
	}
	buf = append(buf[:0], b[start:i]...)
	for i < len(b) {
		run := i
		for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
			i++
		}
		buf = append(buf, b[run:i]...)
		if i == len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			s.Pos = i + 1
			return buf, buf, utf8.Valid(buf)
		case c < 0x20:
			return nil, buf, false
		}
		if i+1 >= len(b) {
			return nil, buf, false
		}
		switch e := b[i+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(b[i+2:])
			if !ok {
				return nil, buf, false
			}
			if utf16.IsSurrogate(r) {
				// Only a high surrogate followed by a low one is a rune.
				if len(b) < i+12 || b[i+6] != '\\' || b[i+7] != 'u' {
					return nil, buf, false
				}
				lo, ok := hex4(b[i+8:])
				if r = utf16.DecodeRune(r, lo); !ok || r == utf8.RuneError {
					return nil, buf, false
				}
				i += 6
			}
			buf = utf8.AppendRune(buf, r)
			i += 4
		default:
			return nil, buf, false
		}
		i += 2
	}
	return nil, buf, false
}

// AppendUnescaped appends the decoded form of raw, the text of a string as
// RawString returns it, to dst. It decodes as encoding/json does: a
// surrogate pair becomes one rune and an unpaired surrogate U+FFFD, in
// which case exact is false.
func AppendUnescaped(dst, raw []byte) (_ []byte, exact bool) {
	exact = true
	s := raw
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...), exact
		}
		dst = append(dst, s[:i]...)
		s = s[i:]
		if len(s) < 2 {
			return dst, false
		}
		switch c := s[1]; c {
		case 'u':
			r, ok := hex4(s[2:])
			if !ok {
				return dst, false
			}
			s = s[6:]
			if utf16.IsSurrogate(r) {
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					if lo, ok := hex4(s[2:]); ok {
						if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
							dst = utf8.AppendRune(dst, dec)
							s = s[6:]
							continue
						}
					}
				}
				r, exact = utf8.RuneError, false
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
	return dst, exact
}

// hex4 decodes the four hex digits that start b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Int reads an integer at Pos (no white space is skipped) as JSON writes
// one: an optional minus and one to nine digits without a leading zero.
// A fraction or exponent fails, as encoding/json fails for an int field;
// more digits fail to spare the overflow check.
func (s *Scanner) Int() (int, bool) {
	b, i, neg := s.Data, s.Pos, false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	start, n := i, 0
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		n = n*10 + int(b[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 9 || (digits > 1 && b[start] == '0') {
		return 0, false
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, false
	}
	s.Pos = i
	if neg {
		n = -n
	}
	return n, true
}

// SkipNumber moves past a number at Pos (no white space is skipped):
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *Scanner) SkipNumber() bool {
	b, i := s.Data, s.Pos
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		d := i + 1
		if i = digits(b, d); i == d {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		if i = digits(b, d); i == d {
			return false
		}
	}
	s.Pos = i
	return true
}

// digits returns the index of the first non-digit at or after i.
func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// SkipValue moves past one value after white space, checking its syntax
// as strictly as encoding/json does (strings' UTF-8 aside, see RawString).
// Arrays and objects count as nesting (see Enter).
func (s *Scanner) SkipValue() bool {
	switch s.SkipSpace() {
	case '"':
		s.Pos++
		_, _, ok := s.RawString()
		return ok
	case '{':
		s.Pos++
		if !s.Enter() {
			return false
		}
		if s.SkipSpace() == '}' {
			s.Pos++
			s.Leave()
			return true
		}
		for {
			if s.Next() != '"' {
				return false
			}
			if _, _, ok := s.RawString(); !ok || s.Next() != ':' || !s.SkipValue() {
				return false
			}
			switch s.Next() {
			case ',':
			case '}':
				s.Leave()
				return true
			default:
				return false
			}
		}
	case '[':
		s.Pos++
		if !s.Enter() {
			return false
		}
		if s.SkipSpace() == ']' {
			s.Pos++
			s.Leave()
			return true
		}
		for {
			if !s.SkipValue() {
				return false
			}
			switch s.Next() {
			case ',':
			case ']':
				s.Leave()
				return true
			default:
				return false
			}
		}
	case 't':
		return s.Literal("true")
	case 'f':
		return s.Literal("false")
	case 'n':
		return s.Literal("null")
	default:
		return s.SkipNumber()
	}
}
