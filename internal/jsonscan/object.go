package jsonscan

import (
	"bytes"
	"unicode/utf8"
)

// The object and array steps the adapters' fast parsers share, each as
// strict as encoding/json about what it consumes.

// Folds reports whether key could name one of the known keys in
// encoding/json's case-insensitive matching: it equals one of them ignoring
// ASCII case, or it is not plain ASCII (Unicode folding could map it to
// one). Either way a fast parser steps aside.
func Folds(key []byte, known ...string) bool {
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

// Key reads the next key of an object whose opening brace has been
// consumed, and its colon; more is false at the closing brace. Keys with
// escapes are refused.
func (s *Scanner) Key(first bool) (key []byte, more, ok bool) {
	c := s.Next()
	if c == '}' {
		return nil, false, true
	}
	if !first {
		if c != ',' {
			return nil, false, false
		}
		c = s.Next()
	}
	if c != '"' {
		return nil, false, false
	}
	raw, f, ok := s.RawString()
	if !ok || f&Escaped != 0 || s.Next() != ':' {
		return nil, false, false
	}
	s.SkipSpace()
	return raw, true, true
}

// Elem moves to the next element of an array whose opening bracket has
// been consumed; more is false at the closing bracket.
func (s *Scanner) Elem(first bool) (more, ok bool) {
	c := s.SkipSpace()
	if s.Pos >= len(s.Data) {
		return false, false
	}
	if c == ']' {
		s.Pos++
		return false, true
	}
	if !first {
		if c != ',' {
			return false, false
		}
		s.Pos++
		s.SkipSpace()
	}
	return true, true
}

// Null consumes a null literal if one is next.
func (s *Scanner) Null() bool {
	return s.SkipSpace() == 'n' && s.Literal("null")
}

// EmptyArray consumes "[]" (with any space inside) if it is next.
func (s *Scanner) EmptyArray() bool {
	if s.SkipSpace() != '[' {
		return false
	}
	save := s.Pos
	s.Pos++
	if s.SkipSpace() == ']' {
		s.Pos++
		return true
	}
	s.Pos = save
	return false
}

// StringOrNull reads a string, refusing invalid UTF-8 (encoding/json would
// replace the bad bytes), or null (raw nil). escaped says the raw text
// holds escapes.
func (s *Scanner) StringOrNull() (raw []byte, escaped, ok bool) {
	switch s.SkipSpace() {
	case 'n':
		return nil, false, s.Literal("null")
	case '"':
		s.Pos++
		raw, f, ok := s.ValidString()
		return raw, f&Escaped != 0, ok
	}
	return nil, false, false
}

// IntOrNull reads a plain integer (see Int) or null (0).
func (s *Scanner) IntOrNull() (int, bool) {
	if s.Null() {
		return 0, true
	}
	return s.Int()
}
