package anthropic

import (
	"bytes"
	"encoding/json"

	"github.com/agcore/agcore/llm"
)

// parseResponse maps a non-streamed answer.
func parseResponse(body []byte) (*llm.Response, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, &llm.Error{Kind: llm.KindMalformed, Provider: providerName,
			Message: "cannot decode the response: " + err.Error(), Err: err}
	}
	if w.Type == "error" {
		var eb wireErrorBody
		json.Unmarshal(body, &eb)
		e := &llm.Error{Kind: llm.KindServer, Provider: providerName, RequestID: eb.RequestID}
		if eb.Error != nil {
			e.Code, e.Message = eb.Error.Type, eb.Error.Message
			e.Kind = kindForType(eb.Error.Type, eb.Error.Message, llm.KindServer)
		}
		return nil, e
	}
	resp := &llm.Response{
		ID:           w.ID,
		Model:        w.Model,
		Message:      llm.Message{Role: llm.RoleAssistant},
		FinishReason: finishReason(w.StopReason),
	}
	var u usageCounts
	u.merge(&w.Usage)
	resp.Usage = u.result()
	if len(w.Content) > 0 {
		resp.Message.Content = make([]llm.Block, 0, len(w.Content))
	}
	for _, raw := range w.Content {
		var c wireContent
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, &llm.Error{Kind: llm.KindMalformed, Provider: providerName,
				Message: "cannot decode a content block: " + err.Error(), Err: err}
		}
		resp.Message.Content = append(resp.Message.Content, blockOf(&c, raw))
	}
	if resp.FinishReason == "" {
		resp.FinishReason = llm.FinishStop
		if resp.Message.HasToolUse() {
			resp.FinishReason = llm.FinishToolUse
		}
	}
	return resp, nil
}

// blockOf maps a complete content block.
func blockOf(c *wireContent, raw json.RawMessage) llm.Block {
	switch c.Type {
	case "text":
		return llm.Text{Text: c.Text, Citations: citations(c.Citations)}
	case "thinking":
		return llm.Thinking{Text: c.Thinking, Signature: c.Signature}
	case "redacted_thinking":
		return llm.RedactedThinking{Data: c.Data}
	case "tool_use":
		in := bytes.TrimSpace(c.Input)
		if len(in) == 0 || string(in) == "null" {
			in = []byte("{}")
		}
		return llm.ToolUse{ID: c.ID, Name: c.Name, Input: json.RawMessage(in)}
	}
	return llm.Extension{Kind: c.Type, Data: raw}
}
