package anthropic

import "github.com/agcore/agcore/internal/jsonscan"

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
	s := scanner{Scanner: jsonscan.Scanner{Data: data}}
	if !s.Consume('{') {
		return ev, buf, false
	}
	var seenIndex, seenDelta bool
	for {
		key, ok := s.plainString()
		if !ok || !s.Consume(':') {
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
		if s.Consume(',') {
			continue
		}
		if s.Consume('}') {
			break
		}
		return ev, buf, false
	}
	if !s.AtEnd() {
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

// scanner adds the event's own value shapes to the shared primitives.
type scanner struct {
	jsonscan.Scanner
}

// plainString scans a string without escapes (keys and type names). It
// fails on invalid UTF-8 (which encoding/json would replace rather than
// reject).
func (s *scanner) plainString() ([]byte, bool) {
	if !s.Consume('"') {
		return nil, false
	}
	raw, f, ok := s.ValidString()
	return raw, ok && f&jsonscan.Escaped == 0
}

// index scans a non-negative integer of at most nine digits, as JSON
// writes it (no leading zeros).
func (s *scanner) index() (int, bool) {
	if s.SkipSpace() == '-' {
		return 0, false
	}
	return s.Int()
}

// delta scans the delta object.
func (s *scanner) delta(buf []byte) (deltaKind, string, []byte, bool) {
	if !s.Consume('{') {
		return 0, "", buf, false
	}
	var kind deltaKind
	var field string // the text field's name
	var val []byte
	var seenType bool
	for {
		key, ok := s.plainString()
		if !ok || !s.Consume(':') {
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
			// A lone surrogate fails (encoding/json turns it into U+FFFD;
			// the fallback handles it).
			if !s.Consume('"') {
				return 0, "", buf, false
			}
			if val, buf, ok = s.Text(buf); !ok {
				return 0, "", buf, false
			}
		default:
			return 0, "", buf, false
		}
		if s.Consume(',') {
			continue
		}
		if s.Consume('}') {
			break
		}
		return 0, "", buf, false
	}
	if !seenType || field != fieldOf[kind] {
		return 0, "", buf, false
	}
	return kind, string(val), buf, true
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
