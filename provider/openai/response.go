package openai

import (
	"bytes"
	"encoding/json"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/internal/adapter"
)

// wireResponse is a non-streamed chat.completion.
type wireResponse struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Content          json.RawMessage `json:"content"` // a string, null, or (some servers) text parts
			ReasoningContent string          `json:"reasoning_content"`
			Reasoning        string          `json:"reasoning"`
			Refusal          string          `json:"refusal"`
			ToolCalls        []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"` // a JSON string; an object on a few servers
				} `json:"function"`
				ExtraContent *wireExtraContent `json:"extra_content"`
			} `json:"tool_calls"`
			Annotations      []wireAnnotation  `json:"annotations"`
			ReasoningDetails []json.RawMessage `json:"reasoning_details"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage      `json:"usage"`
	XGroq *wireXGroq      `json:"x_groq"`
	Error json.RawMessage `json:"error"`
}

// wireXGroq is Groq's extension object; older Groq responses put usage only
// here.
type wireXGroq struct {
	Usage *wireUsage `json:"usage"`
}

type wireUsage struct {
	PromptTokens        tokenCount `json:"prompt_tokens"`
	CompletionTokens    tokenCount `json:"completion_tokens"`
	TotalTokens         tokenCount `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens tokenCount `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens tokenCount `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptCacheHitTokens tokenCount `json:"prompt_cache_hit_tokens"` // DeepSeek
}

// tokenCount is a token count that tolerates what servers send for it: an
// integer, a number with a fraction part, or null.
type tokenCount = adapter.TokenCount

// usage maps the wire usage to llm.Usage. prompt_tokens includes cached
// tokens everywhere (OpenAI's cached_tokens, DeepSeek's
// prompt_cache_hit_tokens), as llm.Usage.InputTokens does. Most servers
// count reasoning inside completion_tokens; xAI does not (its total is
// prompt + completion + reasoning), so there the reasoning tokens are added
// to OutputTokens.
func (w *wireUsage) usage() llm.Usage {
	u := llm.Usage{InputTokens: int(w.PromptTokens), OutputTokens: int(w.CompletionTokens)}
	if d := w.PromptTokensDetails; d != nil {
		u.CachedInputTokens = int(d.CachedTokens)
	}
	if hit := int(w.PromptCacheHitTokens); hit > u.CachedInputTokens {
		u.CachedInputTokens = hit
	}
	if d := w.CompletionTokensDetails; d != nil {
		u.ReasoningTokens = int(d.ReasoningTokens)
	}
	total := int(w.TotalTokens)
	if r := u.ReasoningTokens; r > 0 && total != u.InputTokens+u.OutputTokens && total == u.InputTokens+u.OutputTokens+r {
		u.OutputTokens += r
	}
	return u
}

// mapFinish maps a finish_reason to the neutral one. "stop" after a refusal
// is FinishRefusal; "stop" with tool calls (some servers say so) is
// FinishToolUse. An empty reason is left for the Assembler to infer.
func mapFinish(reason string, refused, hasToolUse bool) llm.FinishReason {
	var f llm.FinishReason
	switch reason {
	case "":
		return ""
	case "stop", "eos", "end_turn", "stop_sequence":
		f = llm.FinishStop
	case "length", "max_tokens":
		f = llm.FinishLength
	case "tool_calls", "function_call", "tool_use":
		f = llm.FinishToolUse
	case "content_filter":
		f = llm.FinishContentFilter
	default:
		return llm.FinishUnknown
	}
	if f == llm.FinishStop && refused {
		f = llm.FinishRefusal
	}
	if f == llm.FinishStop && hasToolUse {
		f = llm.FinishToolUse
	}
	return f
}

// decodeResponse maps a non-streamed response body to a Response. The
// blocks go through an llm.Assembler as a stream's would, so both paths
// build alike: thinking first, then the text (or the refusal), then the
// tool calls in order. Only choice 0 is read.
func (m *Model) decodeResponse(data []byte, status int) (*llm.Response, error) {
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, m.malformed("the response is not a chat completion: " + err.Error())
	}
	if raw := bytes.TrimSpace(w.Error); len(raw) > 0 && string(raw) != "null" {
		we, _ := adapter.ParseError(data)
		return nil, m.inBandError(we, status)
	}
	var a llm.Assembler
	a.SetID(w.ID)
	a.SetModel(w.Model)
	refused, hasTools := false, false
	finish := ""
	idx := 0
	add := func(start llm.Block, delta llm.EventType, text string) {
		a.Add(llm.Event{Type: llm.EventBlockStart, Index: idx, Block: start})
		if text != "" {
			a.Add(llm.Event{Type: delta, Index: idx, Delta: text})
		}
		idx++
	}
	for _, c := range w.Choices {
		if c.Index != 0 {
			continue
		}
		msg := c.Message
		if r := firstNonEmpty(msg.ReasoningContent, msg.Reasoning); r != "" {
			add(llm.Thinking{}, llm.EventThinkingDelta, r)
		}
		if text := contentText(msg.Content); text != "" {
			add(llm.Text{}, llm.EventTextDelta, text)
			for _, c := range citationsOf(msg.Annotations, text) {
				a.Add(llm.Event{Type: llm.EventCitation, Index: idx - 1, Citation: &c})
			}
		}
		if msg.Refusal != "" {
			refused = true
			add(llm.Text{}, llm.EventTextDelta, msg.Refusal)
		}
		for _, tc := range msg.ToolCalls {
			hasTools = true
			id := tc.ID
			if id == "" {
				id = newCallID() // see streamReader.tool
			}
			tu := llm.ToolUse{ID: id, Name: tc.Function.Name}
			if sig := tc.ExtraContent.geminiSignature(); sig != "" {
				tu.Signature, tu.Provider = sig, "gemini"
			}
			add(tu, llm.EventToolInputDelta, argumentsText(tc.Function.Arguments))
		}
		var rd reasoningDetails
		if rd.add(msg.ReasoningDetails); rd.block() != nil {
			add(rd.block(), 0, "")
		}
		finish = c.FinishReason
		break
	}
	if u := pickUsage(w.Usage, w.XGroq); u != nil {
		a.SetUsage(u.usage())
	}
	a.SetFinishReason(mapFinish(finish, refused, hasTools))
	resp, err := a.Finish()
	if err != nil {
		return nil, m.malformed(err.Error())
	}
	return resp, nil
}

func pickUsage(u *wireUsage, x *wireXGroq) *wireUsage {
	if u != nil {
		return u
	}
	if x != nil {
		return x.Usage
	}
	return nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// contentText reads message content: a string, or an array of text parts.
func contentText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		json.Unmarshal(raw, &s)
		return s
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		json.Unmarshal(raw, &parts)
		var buf bytes.Buffer
		for _, p := range parts {
			if p.Type == "text" || p.Type == "" {
				buf.WriteString(p.Text)
			}
		}
		return buf.String()
	}
	return ""
}

// argumentsText reads tool-call arguments: a JSON string holding JSON, or
// (a few servers) the JSON object itself.
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

func (m *Model) malformed(msg string) *llm.Error {
	return &llm.Error{Kind: llm.KindMalformed, Provider: m.cfg.svc.Provider, Message: msg}
}
