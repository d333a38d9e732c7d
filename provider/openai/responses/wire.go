package responses

import (
	"bytes"
	"encoding/json"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/internal/adapter"
)

// wireResponse is a response object: the body of a non-streamed answer,
// and the "response" of a stream's lifecycle events.
type wireResponse struct {
	ID                string            `json:"id"`
	Model             string            `json:"model"`
	Status            string            `json:"status"`
	Output            []json.RawMessage `json:"output"`
	Usage             *wireUsage        `json:"usage"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error json.RawMessage `json:"error"`
}

// wireItem is an output item, reduced to what the adapter reads of the
// three kinds it maps to blocks (message, function_call, reasoning); every
// other kind is kept whole as an extension block.
type wireItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Status           string          `json:"status"`
	Content          []wirePart      `json:"content"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        json.RawMessage `json:"arguments"` // a JSON string holding JSON; an object on a few servers
	Summary          []wirePart      `json:"summary"`
	EncryptedContent string          `json:"encrypted_content"`
}

// wirePart is a content part of a message (output_text, refusal) or a part
// of a reasoning item's summary (summary_text) or content (reasoning_text).
type wirePart struct {
	Type        string            `json:"type"`
	Text        string            `json:"text"`
	Refusal     string            `json:"refusal"`
	Annotations []json.RawMessage `json:"annotations"`
}

type wireUsage struct {
	InputTokens        tokenCount `json:"input_tokens"`
	OutputTokens       tokenCount `json:"output_tokens"`
	InputTokensDetails *struct {
		CachedTokens tokenCount `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens tokenCount `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// tokenCount is a token count that tolerates what servers send for it: an
// integer, a number with a fraction part, or null.
type tokenCount = adapter.TokenCount

// usage maps the wire usage: input_tokens includes the cached ones, and
// output_tokens the reasoning ones, as llm.Usage counts them.
func (w *wireUsage) usage() llm.Usage {
	u := llm.Usage{InputTokens: int(w.InputTokens), OutputTokens: int(w.OutputTokens)}
	if d := w.InputTokensDetails; d != nil {
		u.CachedInputTokens = int(d.CachedTokens)
	}
	if d := w.OutputTokensDetails; d != nil {
		u.ReasoningTokens = int(d.ReasoningTokens)
	}
	return u
}

// finishReason maps a response's status and incomplete reason. "completed"
// is left empty for the Assembler to infer (tool use or stop) unless the
// model refused.
func finishReason(status, incomplete string, refused bool) llm.FinishReason {
	switch status {
	case "completed", "":
		if refused {
			return llm.FinishRefusal
		}
		return ""
	case "incomplete":
		switch incomplete {
		case "max_output_tokens":
			return llm.FinishLength
		case "content_filter":
			return llm.FinishContentFilter
		}
	}
	return llm.FinishUnknown
}

// argumentsText reads function-call arguments: a JSON string holding JSON,
// or (a few servers) the JSON object itself.
func argumentsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		json.Unmarshal(raw, &s)
		return s
	}
	return string(raw)
}
