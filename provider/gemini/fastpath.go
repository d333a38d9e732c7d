package gemini

import "github.com/agcore/agcore/internal/jsonscan"

// decodeFast decodes into c the chunks that make up nearly all of a
// stream, when they have their plain shape:
//
//	{"candidates":[{"content":{"parts":[{"text":"...","thought":true}],"role":"model"},
//	  "finishReason":"STOP","index":0,"groundingMetadata":{},"finishMessage":"...",
//	  "safetyRatings":[...]}],
//	 "usageMetadata":{"promptTokenCount":9,...,"promptTokensDetails":[...]},
//	 "modelVersion":"...","responseId":"..."}
//
// with the keys in any order and any white space, each key optional, at
// most one candidate (index 0) and text parts only. For anything else
// (function calls, signatures, grounding, feedback, errors, other keys,
// duplicates, null values, escapes it does not handle, invalid UTF-8,
// malformed JSON) it returns false and the caller decodes with
// encoding/json, so wherever it returns true c must equal what decodeChunk
// makes of data (FuzzFastPathMatchesEncodingJSON checks it). Texts with
// escapes are decoded into scratch, one buffer per part, kept for reuse.
func decodeFast(data []byte, c *chunk, scratch *[][]byte) bool {
	s := fastScanner{Scanner: jsonscan.Scanner{Data: data, MaxDepth: 32}, scratch: scratch}
	c.reset()
	if !s.Consume('{') {
		return false
	}
	var seen uint8
	if !s.Consume('}') {
		for {
			key, ok := s.plainString()
			if !ok || !s.Consume(':') {
				return false
			}
			var bit uint8
			switch string(key) {
			case "candidates":
				bit, ok = 1, s.candidates(c)
			case "usageMetadata":
				bit, ok = 2, s.usage(c)
			case "modelVersion":
				bit = 4
				c.model, ok = s.plainString()
			case "responseId":
				bit = 8
				c.id, ok = s.plainString()
			default:
				return false
			}
			if !ok || seen&bit != 0 {
				return false
			}
			seen |= bit
			if s.Consume(',') {
				continue
			}
			if s.Consume('}') {
				break
			}
			return false
		}
	}
	return s.AtEnd()
}

type fastScanner struct {
	jsonscan.Scanner
	scratch *[][]byte
}

// plainString scans a string without escapes and with valid UTF-8 (what
// encoding/json would decode to the same bytes).
func (s *fastScanner) plainString() ([]byte, bool) {
	if !s.Consume('"') {
		return nil, false
	}
	raw, f, ok := s.ValidString()
	return raw, ok && f&jsonscan.Escaped == 0
}

// object scans an object, calling field for each key with the scanner at
// its value; field reports whether it scanned the value. Duplicate keys
// fail (encoding/json keeps the last; the fallback handles them).
func (s *fastScanner) object(field func(key []byte) bool) bool {
	if !s.Consume('{') {
		return false
	}
	if s.Consume('}') {
		return true
	}
	for {
		key, ok := s.plainString()
		if !ok || !s.Consume(':') || !field(key) {
			return false
		}
		if s.Consume(',') {
			continue
		}
		return s.Consume('}')
	}
}

// once marks bit in seen and reports whether it was clear.
func once(seen *uint16, bit uint16) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// candidates scans an array of at most one candidate, whose index is 0.
func (s *fastScanner) candidates(c *chunk) bool {
	if !s.Consume('[') {
		return false
	}
	if s.Consume(']') {
		return true
	}
	var seen uint16
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return once(&seen, 1) && s.content(c)
		case "finishReason":
			v, ok := s.plainString()
			c.finish = finishName(v)
			return ok && once(&seen, 2)
		case "index":
			if s.SkipSpace() == '-' {
				return false
			}
			n, ok := s.Int()
			return ok && n == 0 && once(&seen, 4)
		case "groundingMetadata":
			// Gemini streams {} before the real metadata, which the
			// fallback decodes.
			return once(&seen, 8) && s.object(func([]byte) bool { return false })
		case "finishMessage":
			_, ok := s.plainString()
			return ok && once(&seen, 16)
		case "safetyRatings", "citationMetadata", "avgLogprobs", "tokenCount":
			// Read by neither decoder.
			return s.SkipValue()
		}
		return false
	})
	if !ok || !s.Consume(']') {
		return false
	}
	c.candidate, c.candidates = true, 1
	return true
}

func (s *fastScanner) content(c *chunk) bool {
	var seen uint16
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "parts":
			return once(&seen, 1) && s.parts(c)
		case "role":
			_, ok := s.plainString()
			return ok && once(&seen, 2)
		}
		return false
	})
}

func (s *fastScanner) parts(c *chunk) bool {
	if !s.Consume('[') {
		return false
	}
	if s.Consume(']') {
		return true
	}
	for {
		if !s.part(c) {
			return false
		}
		if s.Consume(',') {
			continue
		}
		return s.Consume(']')
	}
}

// part scans a text part: "text" and an optional boolean "thought".
func (s *fastScanner) part(c *chunk) bool {
	i := len(c.parts)
	for len(*s.scratch) <= i {
		*s.scratch = append(*s.scratch, nil)
	}
	p := part{kind: partText}
	var seen uint16
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "text":
			if !once(&seen, 1) || !s.Consume('"') {
				return false
			}
			text, buf, ok := s.Text((*s.scratch)[i])
			(*s.scratch)[i] = buf
			p.text = text
			return ok
		case "thought":
			if !once(&seen, 2) {
				return false
			}
			switch s.SkipSpace() {
			case 't':
				if s.Literal("true") {
					p.kind = partThought
					return true
				}
			case 'f':
				return s.Literal("false")
			}
		}
		return false
	})
	if !ok || seen&1 == 0 {
		return false
	}
	c.parts = append(c.parts, p)
	return true
}

// usage scans usageMetadata: its counts, and the per-modality details and
// other fields the adapter does not use (skipped).
func (s *fastScanner) usage(c *chunk) bool {
	u := &c.usage
	var seen uint16
	ok := s.object(func(key []byte) bool {
		var dst *int
		var bit uint16
		switch string(key) {
		case "promptTokenCount":
			dst, bit = &u.PromptTokenCount, 1
		case "candidatesTokenCount":
			dst, bit = &u.CandidatesTokenCount, 2
		case "cachedContentTokenCount":
			dst, bit = &u.CachedContentTokenCount, 4
		case "thoughtsTokenCount":
			dst, bit = &u.ThoughtsTokenCount, 8
		case "toolUsePromptTokenCount":
			dst, bit = &u.ToolUsePromptTokenCount, 16
		case "totalTokenCount":
			dst, bit = &u.TotalTokenCount, 32
		case "promptTokensDetails", "candidatesTokensDetails", "cacheTokensDetails",
			"toolUsePromptTokensDetails", "trafficType", "serviceTier":
			return s.SkipValue()
		default:
			return false
		}
		s.SkipSpace()
		n, ok := s.Int()
		*dst = n
		return ok && once(&seen, bit)
	})
	c.hasUsage = ok
	return ok
}

// finishName returns the finish reason named by b, without allocating for
// the known ones.
func finishName(b []byte) string {
	for _, r := range finishNames {
		if string(b) == r {
			return r
		}
	}
	return string(b)
}

var finishNames = [...]string{"STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "OTHER", "BLOCKLIST",
	"PROHIBITED_CONTENT", "SPII", "MALFORMED_FUNCTION_CALL", "LANGUAGE", "UNEXPECTED_TOOL_CALL",
	"TOO_MANY_TOOL_CALLS", "FINISH_REASON_UNSPECIFIED", "IMAGE_SAFETY", "MODEL_ARMOR",
	"IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "IMAGE_OTHER", "NO_IMAGE"}
