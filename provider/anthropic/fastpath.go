package anthropic

import (
	"unicode/utf16"
	"unicode/utf8"
)

// deltaKind is the kind of a content_block_delta.
type deltaKind uint8

const (
	deltaOther     deltaKind = iota // any other delta type (citations, compaction, ...)
	deltaText                       // text_delta: text
	deltaThinking                   // thinking_delta: thinking
	deltaInput                      // input_json_delta: partial_json
	deltaSignature                  // signature_delta: signature
)

// fastType is an event type the fast path decodes.
type fastType uint8

const (
	fastNone        fastType = iota
	fastDelta                // content_block_delta
	fastBlockStop            // content_block_stop
	fastMessageStop          // message_stop
	fastPing                 // ping
)

var fastTypeName = [...]string{
	fastDelta:       "content_block_delta",
	fastBlockStop:   "content_block_stop",
	fastMessageStop: "message_stop",
	fastPing:        "ping",
}

// fastEvent is what the fast path decodes from an event's data.
type fastEvent struct {
	typ   fastType
	index int
	kind  deltaKind
	text  string
}

// decodeFast decodes the data of the events that make up nearly all of a
// stream when they have their plain shapes:
//
//	{"type":"content_block_delta","index":N,"delta":{"type":T,F:"..."}}
//	{"type":"content_block_stop","index":N}
//	{"type":"message_stop"}
//	{"type":"ping"}
//
// with the keys in any order and any whitespace, where T and F are
// text_delta/text, thinking_delta/thinking, input_json_delta/partial_json or
// signature_delta/signature. For anything else (other keys or types,
// duplicates, escapes it does not handle, invalid UTF-8, malformed JSON) ok
// is false and the caller decodes with encoding/json, so wherever ok is true
// the result must equal encoding/json's (FuzzFastPathMatchesEncodingJSON
// checks it). buf is scratch space for unescaping, returned for reuse.
func decodeFast(data, buf []byte) (ev fastEvent, _ []byte, ok bool) {
	s := scanner{b: data}
	if !s.consume('{') {
		return ev, buf, false
	}
	var seenIndex, seenDelta bool
	for {
		key, ok := s.plainString()
		if !ok || !s.consume(':') {
			return ev, buf, false
		}
		switch string(key) {
		case "type":
			v, ok := s.plainString()
			if !ok || ev.typ != fastNone {
				return ev, buf, false
			}
			switch string(v) {
			case "content_block_delta":
				ev.typ = fastDelta
			case "content_block_stop":
				ev.typ = fastBlockStop
			case "message_stop":
				ev.typ = fastMessageStop
			case "ping":
				ev.typ = fastPing
			default:
				return ev, buf, false
			}
		case "index":
			n, ok := s.index()
			if !ok || seenIndex {
				return ev, buf, false
			}
			ev.index, seenIndex = n, true
		case "delta":
			if seenDelta {
				return ev, buf, false
			}
			ev.kind, ev.text, buf, ok = s.delta(buf)
			if !ok {
				return ev, buf, false
			}
			seenDelta = true
		default:
			return ev, buf, false
		}
		if s.consume(',') {
			continue
		}
		if s.consume('}') {
			break
		}
		return ev, buf, false
	}
	s.space()
	if s.i != len(s.b) {
		return ev, buf, false
	}
	switch ev.typ {
	case fastDelta:
		ok = seenIndex && seenDelta
	case fastBlockStop:
		ok = seenIndex && !seenDelta
	case fastMessageStop, fastPing:
		ok = !seenIndex && !seenDelta
	}
	return ev, buf, ok
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips whitespace and then c, reporting whether c was there.
func (s *scanner) consume(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// rawString scans a string and returns its bytes between the quotes, still
// escaped. It fails on control characters and on invalid UTF-8 (which
// encoding/json would replace rather than reject).
func (s *scanner) rawString() (raw []byte, escaped, ok bool) {
	if !s.consume('"') {
		return nil, false, false
	}
	start := s.i
	ascii := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(raw) {
				return nil, false, false
			}
			return raw, escaped, true
		case c == '\\':
			escaped = true
			s.i += 2 // the escape is checked when unescaping
		case c < 0x20:
			return nil, false, false
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			s.i++
		}
	}
	return nil, false, false
}

// plainString scans a string without escapes (keys and type names).
func (s *scanner) plainString() ([]byte, bool) {
	raw, escaped, ok := s.rawString()
	return raw, ok && !escaped
}

// index scans a non-negative integer of at most nine digits, as JSON
// writes it (no leading zeros).
func (s *scanner) index() (int, bool) {
	s.space()
	start, n := s.i, 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		n = n*10 + int(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	if digits == 0 || digits > 9 || (digits > 1 && s.b[start] == '0') {
		return 0, false
	}
	return n, true
}

// delta scans the delta object.
func (s *scanner) delta(buf []byte) (deltaKind, string, []byte, bool) {
	if !s.consume('{') {
		return 0, "", buf, false
	}
	var kind deltaKind
	var field string // the text field's name
	var val []byte
	var escaped, seenType bool
	for {
		key, ok := s.plainString()
		if !ok || !s.consume(':') {
			return 0, "", buf, false
		}
		switch string(key) {
		case "type":
			v, ok := s.plainString()
			if !ok || seenType {
				return 0, "", buf, false
			}
			seenType = true
			switch string(v) {
			case "text_delta":
				kind = deltaText
			case "thinking_delta":
				kind = deltaThinking
			case "input_json_delta":
				kind = deltaInput
			case "signature_delta":
				kind = deltaSignature
			default:
				return 0, "", buf, false
			}
		case "text", "thinking", "partial_json", "signature":
			if field != "" {
				return 0, "", buf, false
			}
			field = fieldNamed(key)
			if val, escaped, ok = s.rawString(); !ok {
				return 0, "", buf, false
			}
		default:
			return 0, "", buf, false
		}
		if s.consume(',') {
			continue
		}
		if s.consume('}') {
			break
		}
		return 0, "", buf, false
	}
	if !seenType || field != fieldOf[kind] {
		return 0, "", buf, false
	}
	if !escaped {
		return kind, string(val), buf, true
	}
	buf, ok := unescape(buf[:0], val)
	if !ok {
		return 0, "", buf, false
	}
	return kind, string(buf), buf, true
}

// fieldNamed returns the constant equal to key (one of fieldOf's names),
// so remembering it does not allocate.
func fieldNamed(key []byte) string {
	for _, f := range fieldOf[1:] {
		if string(key) == f {
			return f
		}
	}
	return ""
}

var fieldOf = [...]string{
	deltaText:      "text",
	deltaThinking:  "thinking",
	deltaInput:     "partial_json",
	deltaSignature: "signature",
}

// unescape appends the unescaped form of a JSON string's contents to dst.
// A lone surrogate fails (encoding/json turns it into U+FFFD; the fallback
// handles it).
func unescape(dst, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := i + 1
			for j < len(s) && s[j] != '\\' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		if i+1 >= len(s) {
			return dst, false
		}
		switch s[i+1] {
		case '"', '\\', '/':
			dst = append(dst, s[i+1])
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
		case 'u':
			r, ok := hex4(s[i+2:])
			if !ok {
				return dst, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if i+1 >= len(s) || s[i] != '\\' || s[i+1] != 'u' {
					return dst, false
				}
				r2, ok := hex4(s[i+2:])
				if !ok {
					return dst, false
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return dst, false
				}
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			return dst, false
		}
		i += 2
	}
	return dst, true
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
