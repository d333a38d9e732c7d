package responses

import (
	"bytes"
	"encoding/json"

	"github.com/agcore/agcore/internal/jsonscan"
)

// A stream event's data is read by one of two parsers that fill the same
// event value. The fast one is a single pass over the bytes that keeps only
// the fields the adapter reads and allocates nothing: strings stay slices
// of the data (with a flag when they hold escapes), and nested objects
// (item, part, response, annotation) stay raw slices for encoding/json to
// decode later, on the rare events that carry them. It gives up on
// duplicate or case-folded keys, non-ASCII or escaped keys, numbers that are
// not plain integers, invalid UTF-8 in a kept string and deep nesting; the
// encoding/json parser then reads the event. Whenever the fast parser
// accepts an event, encoding/json accepts it too and yields the same
// values; FuzzEventParsers checks that.

// jstr is a JSON string value: raw is the text between the quotes, esc says
// whether it holds escapes still to be decoded.
type jstr struct {
	raw []byte
	esc bool
}

// event is one stream event, reduced to what the adapter reads. The raw
// fields are nil when absent or null.
type event struct {
	typ                              jstr
	delta, text, arguments, refusal  jstr
	outputIndex, contentIndex        int
	summaryIndex                     int
	item, part, response, annotation []byte
}

func (e *event) reset() { *e = event{} }

// event keys, as bits for duplicate detection.
const (
	keyType = 1 << iota
	keyDelta
	keyText
	keyArguments
	keyRefusal
	keyOutputIndex
	keyContentIndex
	keySummaryIndex
	keyItem
	keyPart
	keyResponse
	keyAnnotation
)

var eventKeys = []string{"type", "delta", "text", "arguments", "refusal", "output_index", "content_index",
	"summary_index", "item", "part", "response", "annotation"}

// maxFastDepth bounds the nesting the fast parser skips through.
const maxFastDepth = 64

type fastParser struct {
	jsonscan.Scanner
}

// parseEventFast fills e from data and reports whether it could.
func parseEventFast(data []byte, e *event) bool {
	e.reset()
	p := fastParser{jsonscan.Scanner{Data: data, MaxDepth: maxFastDepth}}
	if !p.Consume('{') {
		return false
	}
	seen := 0
	for first := true; ; first = false {
		key, more, ok := p.Key(first)
		if !ok {
			return false
		}
		if !more {
			return p.AtEnd()
		}
		var bit int
		switch string(key) {
		case "type":
			bit = keyType
			e.typ, ok = p.strOrNull()
		case "delta":
			bit = keyDelta
			e.delta, ok = p.strOrNull()
		case "text":
			bit = keyText
			e.text, ok = p.strOrNull()
		case "arguments":
			bit = keyArguments
			e.arguments, ok = p.strOrNull()
		case "refusal":
			bit = keyRefusal
			e.refusal, ok = p.strOrNull()
		case "output_index":
			bit = keyOutputIndex
			e.outputIndex, ok = p.IntOrNull()
		case "content_index":
			bit = keyContentIndex
			e.contentIndex, ok = p.IntOrNull()
		case "summary_index":
			bit = keySummaryIndex
			e.summaryIndex, ok = p.IntOrNull()
		case "item":
			bit = keyItem
			e.item, ok = p.rawObject()
		case "part":
			bit = keyPart
			e.part, ok = p.rawObject()
		case "response":
			bit = keyResponse
			e.response, ok = p.rawObject()
		case "annotation":
			bit = keyAnnotation
			e.annotation, ok = p.rawObject()
		default:
			ok = !jsonscan.Folds(key, eventKeys...) && p.SkipValue()
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

// strOrNull reads a string, refusing invalid UTF-8 (encoding/json would
// replace the bad bytes), or null.
func (p *fastParser) strOrNull() (jstr, bool) {
	raw, esc, ok := p.StringOrNull()
	return jstr{raw: raw, esc: esc}, ok
}

// rawObject returns the bytes of an object value (nil for null). Anything
// else is refused: encoding/json would decode it into the wire structs
// and fail, which is its parser's error to give.
func (p *fastParser) rawObject() ([]byte, bool) {
	if p.Null() {
		return nil, true
	}
	if p.SkipSpace() != '{' {
		return nil, false
	}
	start := p.Pos
	if !p.SkipValue() {
		return nil, false
	}
	return p.Data[start:p.Pos], true
}

// ---- the encoding/json path ----

type wireEvent struct {
	Type         string          `json:"type"`
	Delta        string          `json:"delta"`
	Text         string          `json:"text"`
	Arguments    string          `json:"arguments"`
	Refusal      string          `json:"refusal"`
	OutputIndex  int             `json:"output_index"`
	ContentIndex int             `json:"content_index"`
	SummaryIndex int             `json:"summary_index"`
	Item         json.RawMessage `json:"item"`
	Part         json.RawMessage `json:"part"`
	Response     json.RawMessage `json:"response"`
	Annotation   json.RawMessage `json:"annotation"`
}

// parseEventStd fills e from data with encoding/json. Nested objects must
// be objects (or null).
func parseEventStd(data []byte, e *event) error {
	e.reset()
	var w wireEvent
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	e.typ, e.delta, e.text, e.arguments, e.refusal = plain(w.Type), plain(w.Delta), plain(w.Text), plain(w.Arguments), plain(w.Refusal)
	e.outputIndex, e.contentIndex, e.summaryIndex = w.OutputIndex, w.ContentIndex, w.SummaryIndex
	for _, f := range []struct {
		dst *[]byte
		raw json.RawMessage
		key string
	}{{&e.item, w.Item, "item"}, {&e.part, w.Part, "part"}, {&e.response, w.Response, "response"}, {&e.annotation, w.Annotation, "annotation"}} {
		raw := bytes.TrimSpace(f.raw)
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		if raw[0] != '{' {
			return &json.UnmarshalTypeError{Value: "non-object", Field: f.key}
		}
		*f.dst = raw
	}
	return nil
}

func plain(s string) jstr {
	if s == "" {
		return jstr{}
	}
	return jstr{raw: []byte(s)}
}

// appendUnescaped appends the decoded form of a string's raw text to dst,
// decoding escapes as encoding/json does.
func appendUnescaped(dst, s []byte) []byte {
	dst, _ = jsonscan.AppendUnescaped(dst, s)
	return dst
}

// ---- response objects ----

// responseKeys are the keys of a response object the reader uses.
var responseKeys = []string{"id", "model", "status", "output", "usage", "incomplete_details", "error"}

// scanResponse reads a response object (a stream's lifecycle event, or a
// whole non-streamed body) in one pass, as the fast event parser reads an
// event: the strings and the small objects the reader uses, and the output
// items as raw slices of data, leaving the rest (tools, instructions, the
// request's echo) unread. It reports whether it could; encoding/json then
// reads what it could not, into the same values (FuzzResponse checks that).
func scanResponse(data []byte, r *wireResponse) bool {
	*r = wireResponse{}
	p := fastParser{jsonscan.Scanner{Data: data, MaxDepth: maxFastDepth}}
	if !p.Consume('{') {
		return false
	}
	var buf []byte
	str := func(j jstr) string {
		if !j.esc {
			return string(j.raw)
		}
		buf = appendUnescaped(buf[:0], j.raw)
		return string(buf)
	}
	seen := 0
	for first := true; ; first = false {
		key, more, ok := p.Key(first)
		if !ok {
			return false
		}
		if !more {
			return p.AtEnd()
		}
		var bit int
		var j jstr
		switch string(key) {
		case "id":
			bit = 1
			j, ok = p.strOrNull()
			r.ID = str(j)
		case "model":
			bit = 2
			j, ok = p.strOrNull()
			r.Model = str(j)
		case "status":
			bit = 4
			j, ok = p.strOrNull()
			r.Status = str(j)
		case "output":
			bit = 8
			ok = p.outputItems(r)
		case "usage":
			bit = 16
			var raw []byte
			if raw, ok = p.rawObject(); ok && raw != nil {
				r.Usage = new(wireUsage)
				ok = json.Unmarshal(raw, r.Usage) == nil
			}
		case "incomplete_details":
			bit = 32
			var raw []byte
			if raw, ok = p.rawObject(); ok && raw != nil {
				r.IncompleteDetails = &struct {
					Reason string `json:"reason"`
				}{}
				ok = json.Unmarshal(raw, r.IncompleteDetails) == nil
			}
		case "error":
			bit = 64
			start := p.Pos
			if ok = p.SkipValue(); ok {
				r.Error = bytes.TrimSpace(p.Data[start:p.Pos])
			}
		default:
			ok = !jsonscan.Folds(key, responseKeys...) && p.SkipValue()
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

// outputItems reads an array of objects (or null) into r.Output, each item
// a slice of the data.
func (p *fastParser) outputItems(r *wireResponse) bool {
	if p.Null() {
		return true
	}
	if !p.Consume('[') {
		return false
	}
	r.Output = []json.RawMessage{}
	for first := true; ; first = false {
		c := p.SkipSpace()
		if c == ']' {
			p.Pos++
			return true
		}
		if !first {
			if c != ',' {
				return false
			}
			p.Pos++
		}
		raw, ok := p.rawObject()
		if !ok || raw == nil {
			return false
		}
		r.Output = append(r.Output, raw)
	}
}

// parseResponse reads a response object: scanResponse, else encoding/json.
func parseResponse(data []byte, r *wireResponse) error {
	if scanResponse(data, r) {
		return nil
	}
	*r = wireResponse{}
	return json.Unmarshal(data, r)
}
