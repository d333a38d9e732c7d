package gemini

import (
	"github.com/agcore/agcore/llm"
)

// parseResponse maps a generateContent answer, through the same turn as
// a stream's chunks. model is the requested model, for an answer that
// names none.
func parseResponse(body []byte, model string) (*llm.Response, error) {
	var c chunk
	if err := decodeChunk(body, &c); err != nil {
		e := malformed("cannot decode the response: %v", err)
		e.Err = err
		return nil, e
	}
	if c.err == nil && c.block == nil && !c.candidate {
		return nil, malformed("the response has no candidate")
	}
	var t turn
	t.init(model)
	var out *llm.Response
	collect := func(ev llm.Event, _ error) bool {
		if ev.Type == llm.EventComplete {
			out = ev.Response
		}
		return true
	}
	if _, err := t.feed(&c, collect); err != nil {
		return nil, err
	}
	if err := t.complete(collect); err != nil {
		return nil, err
	}
	return out, nil
}
