package openai

import (
	"bytes"
	"encoding/json"

	"github.com/agcore/agcore/internal/jsonscan"
	"github.com/agcore/agcore/provider/internal/adapter"
)

// A stream chunk is read by one of two parsers that fill the same chunk
// value. The fast one is a single pass over the bytes that keeps only what
// the adapter uses and allocates nothing: strings stay slices of the event's
// data until the adapter turns the one it needs into a string. It accepts
// the common shapes (text, reasoning, refusal and tool-call deltas, finish
// reasons, "usage": null) and gives up on anything else (usage objects,
// error objects, x_groq, duplicate or case-folded keys, non-ASCII keys, odd
// number forms, invalid UTF-8, deep nesting), which then goes to
// encoding/json. Whenever the fast parser accepts a chunk, encoding/json
// accepts it too and yields the same values; FuzzChunkParsers checks that.

// jstr is a JSON string value: raw is the text between the quotes, esc says
// whether it holds escapes still to be decoded.
type jstr struct {
	raw []byte
	esc bool
}

// chunk is one chat.completion.chunk, reduced to what the adapter reads.
type chunk struct {
	id, model jstr
	choices   []choice
	usage     *wireUsage // set only by the encoding/json path
	err       *wireError // set only by the encoding/json path
}

type choice struct {
	index                                             int
	content, reasoningContent, reasoning, refusal, fr jstr
	toolCalls                                         []toolDelta
	// Rare extras, set only by the encoding/json path (see extras.go).
	annotations      []wireAnnotation
	reasoningDetails []json.RawMessage
}

type toolDelta struct {
	index          int
	id, name, args jstr
	signature      string // Gemini's thought signature; encoding/json path only
}

func (c *chunk) reset() {
	c.id, c.model = jstr{}, jstr{}
	c.choices = c.choices[:0]
	c.usage, c.err = nil, nil
}

// addChoice appends a zeroed choice, reusing the tool-call slice of one
// from an earlier chunk.
func (c *chunk) addChoice() *choice {
	n := len(c.choices)
	if n < cap(c.choices) {
		c.choices = c.choices[:n+1]
		ch := &c.choices[n]
		*ch = choice{toolCalls: ch.toolCalls[:0]}
		return ch
	}
	c.choices = append(c.choices, choice{})
	return &c.choices[n]
}

// ---- the fast parser ----

type fastParser struct {
	jsonscan.Scanner
}

// maxFastDepth bounds the nesting the fast parser skips through.
const maxFastDepth = 64

// parseChunkFast fills c from data and reports whether it could.
func parseChunkFast(data []byte, c *chunk) bool {
	c.reset()
	p := fastParser{jsonscan.Scanner{Data: data, MaxDepth: maxFastDepth}}
	return p.top(c) && p.AtEnd()
}

func (p *fastParser) top(c *chunk) bool {
	const (
		seenID = 1 << iota
		seenModel
		seenChoices
		seenUsage
		seenError
		seenXGroq
	)
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
			return true
		}
		var bit int
		switch string(key) {
		case "id":
			bit = seenID
			if c.id, ok = p.strOrNull(); !ok {
				return false
			}
		case "model":
			bit = seenModel
			if c.model, ok = p.strOrNull(); !ok {
				return false
			}
		case "choices":
			bit = seenChoices
			if !p.choices(c) {
				return false
			}
		case "usage":
			bit = seenUsage
			if !p.Null() {
				return false // a usage object: encoding/json reads it
			}
		case "error":
			bit = seenError
			if !p.Null() {
				return false
			}
		case "x_groq":
			bit = seenXGroq
			if !p.Null() {
				return false
			}
		default:
			if jsonscan.Folds(key, "id", "model", "choices", "usage", "error", "x_groq") || !p.skip() {
				return false
			}
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

func (p *fastParser) choices(c *chunk) bool {
	if p.Null() {
		return true
	}
	if !p.Consume('[') {
		return false
	}
	for first := true; ; first = false {
		more, ok := p.Elem(first)
		if !ok {
			return false
		}
		if !more {
			return true
		}
		if !p.choice(c.addChoice()) {
			return false
		}
	}
}

func (p *fastParser) choice(ch *choice) bool {
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
			return true
		}
		var bit int
		switch string(key) {
		case "index":
			bit = 1
			if ch.index, ok = p.IntOrNull(); !ok {
				return false
			}
		case "delta":
			bit = 2
			if !p.Null() && !p.delta(ch) {
				return false
			}
		case "finish_reason":
			bit = 4
			if ch.fr, ok = p.strOrNull(); !ok {
				return false
			}
		default:
			if jsonscan.Folds(key, "index", "delta", "finish_reason") || !p.skip() {
				return false
			}
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

func (p *fastParser) delta(ch *choice) bool {
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
			return true
		}
		var bit int
		switch string(key) {
		case "content":
			bit = 1
			ch.content, ok = p.strOrNull()
		case "reasoning_content":
			bit = 2
			ch.reasoningContent, ok = p.strOrNull()
		case "reasoning":
			bit = 4
			ch.reasoning, ok = p.strOrNull()
		case "refusal":
			bit = 8
			ch.refusal, ok = p.strOrNull()
		case "tool_calls":
			bit = 16
			ok = p.toolCalls(ch)
		case "annotations", "reasoning_details":
			// Rare, and read by encoding/json: decline unless empty.
			bit = 32
			if string(key) == "reasoning_details" {
				bit = 64
			}
			ok = p.Null() || p.EmptyArray()
		default:
			ok = !jsonscan.Folds(key, "content", "reasoning_content", "reasoning", "refusal", "tool_calls", "annotations", "reasoning_details") && p.skip()
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

func (p *fastParser) toolCalls(ch *choice) bool {
	if p.Null() {
		return true
	}
	if !p.Consume('[') {
		return false
	}
	for first := true; ; first = false {
		more, ok := p.Elem(first)
		if !ok {
			return false
		}
		if !more {
			return true
		}
		ch.toolCalls = append(ch.toolCalls, toolDelta{})
		if !p.toolCall(&ch.toolCalls[len(ch.toolCalls)-1]) {
			return false
		}
	}
}

func (p *fastParser) toolCall(tc *toolDelta) bool {
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
			return true
		}
		var bit int
		switch string(key) {
		case "index":
			bit = 1
			tc.index, ok = p.IntOrNull()
		case "id":
			bit = 2
			tc.id, ok = p.strOrNull()
		case "function":
			bit = 4
			ok = p.Null() || p.function(tc)
		case "extra_content":
			bit = 8
			ok = p.Null() // an object (Gemini's signature): encoding/json reads it
		default:
			ok = !jsonscan.Folds(key, "index", "id", "function", "extra_content") && p.skip()
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

func (p *fastParser) function(tc *toolDelta) bool {
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
			return true
		}
		var bit int
		switch string(key) {
		case "name":
			bit = 1
			tc.name, ok = p.strOrNull()
		case "arguments":
			bit = 2
			tc.args, ok = p.strOrNull()
		default:
			ok = !jsonscan.Folds(key, "name", "arguments") && p.skip()
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

// ---- the encoding/json path ----

type wireChunk struct {
	ID      string            `json:"id"`
	Model   string            `json:"model"`
	Choices []wireChunkChoice `json:"choices"`
	Usage   *wireUsage        `json:"usage"`
	XGroq   *wireXGroq        `json:"x_groq"`
	Error   json.RawMessage   `json:"error"`
}

type wireChunkChoice struct {
	Index int `json:"index"`
	Delta struct {
		Content          string `json:"content"`
		ReasoningContent string `json:"reasoning_content"`
		Reasoning        string `json:"reasoning"`
		Refusal          string `json:"refusal"`
		ToolCalls        []struct {
			Index    int    `json:"index"`
			ID       string `json:"id"`
			Function struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
			ExtraContent *wireExtraContent `json:"extra_content"`
		} `json:"tool_calls"`
		Annotations      []wireAnnotation  `json:"annotations"`
		ReasoningDetails []json.RawMessage `json:"reasoning_details"`
	} `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

// parseChunkStd fills c from data with encoding/json.
func parseChunkStd(data []byte, c *chunk) error {
	c.reset()
	var w wireChunk
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	c.id, c.model = plain(w.ID), plain(w.Model)
	for _, wc := range w.Choices {
		ch := c.addChoice()
		ch.index = wc.Index
		d := &wc.Delta
		ch.content, ch.reasoningContent, ch.reasoning, ch.refusal = plain(d.Content), plain(d.ReasoningContent), plain(d.Reasoning), plain(d.Refusal)
		ch.fr = plain(wc.FinishReason)
		ch.annotations, ch.reasoningDetails = d.Annotations, d.ReasoningDetails
		for _, tc := range d.ToolCalls {
			ch.toolCalls = append(ch.toolCalls, toolDelta{
				index: tc.Index, id: plain(tc.ID), name: plain(tc.Function.Name), args: plain(argumentsText(tc.Function.Arguments)),
				signature: tc.ExtraContent.geminiSignature(),
			})
		}
	}
	c.usage = pickUsage(w.Usage, w.XGroq)
	if raw := bytes.TrimSpace(w.Error); len(raw) > 0 && string(raw) != "null" {
		we := adapter.ErrorValue(raw)
		c.err = &we
	}
	return nil
}

func plain(s string) jstr {
	if s == "" {
		return jstr{}
	}
	return jstr{raw: []byte(s)}
}
